import type { Knex } from 'knex';

// Issue 28 (SPEC §21): the codecs a video is encoded in, chosen at creation. H.264 is always one of
// them; "hevc" and "av1" add CMAF renditions and the DASH manifest.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table videos add column codecs jsonb not null default '["h264"]'::jsonb`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table videos drop column codecs`);
}
