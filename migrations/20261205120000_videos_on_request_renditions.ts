import type { Knex } from 'knex';

// SPEC §23 second round (issue 47): the rungs a video's master lists while their segments are
// still encoded on request (`[{name, width, height, bitrate}]`), written with the master by
// publishMaster and emptied as the ladder lands. On-demand images render from them (they play),
// and the CDN serves their segments as replaceable until then (the ladder writes its own over them).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table videos add column if not exists on_request_renditions jsonb`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table videos drop column if exists on_request_renditions`);
}
