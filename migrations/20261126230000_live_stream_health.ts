import type { Knex } from 'knex';

// SPEC §22 stream health: what the encoder of the broadcast going on sends, as the media server
// (protocol, at admission) and the live session (codecs, size, fps, bitrate, keyframe interval,
// measured on the feed) last wrote it; null when no broadcast is on. The read shape prefers the
// live edge's own measure for SRT and WHIP publishers.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table live_streams add column if not exists health jsonb`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table live_streams drop column if exists health`);
}
