import type { Knex } from 'knex';

// SPEC §21: `codecs` "per video or workspace default". A video created without `codecs` takes the
// workspace's; H.264 is always one of them (the API normalises before writing).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table workspaces add column default_codecs jsonb not null default '["h264"]'::jsonb`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table workspaces drop column default_codecs`);
}
