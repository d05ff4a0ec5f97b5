import type { Knex } from 'knex';

// Issue 28 "audio once": an audio rendition may also exist as CMAF (fMP4, `hls/audio/<rendition>-cmaf/`),
// stream-copied from its TS segments for the HEVC/AV1 variants and the DASH manifest. The master's
// CMAF audio group names only the tracks that have it.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table audio_tracks add column cmaf boolean not null default false`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table audio_tracks drop column cmaf`);
}
