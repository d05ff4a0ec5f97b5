import type { Knex } from 'knex';

// SPEC §23 item 4 (issue 34): `dash_url` is in the read shape only once the DASH manifest exists
// (publishDash sets this); before, it answered 404 from `ready` until the extra codecs finished.
// Videos made before it keep what they showed (their manifest may or may not be written yet:
// storage is not visible from here).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table videos add column if not exists dash_ready boolean not null default false`);
  await knex.raw(
    `update videos set dash_ready = true where status = 'ready' and (codecs @> '["hevc"]'::jsonb or codecs @> '["av1"]'::jsonb)`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table videos drop column if exists dash_ready`);
}
