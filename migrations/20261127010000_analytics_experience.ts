import type { Knex } from 'knex';

// Experience scores (SPEC §18 second round, issue 36 item 4). Raw events gain the player's
// displayed height (device pixels; upscale/downscale against the rendition's height). The hourly
// buckets gain additive sums, so any range adds up exactly: startup vs playback failures, the
// per-view experience score's sum and count, bitrate × time played and time played with a known
// bitrate (time-weighted bitrate), and scale factors × time played (upscale/downscale %).
// Nullable/defaulted columns: metadata-only changes, no table rewrite.
const HOURLY = [
  'startup_failures integer not null default 0',
  'playback_failures integer not null default 0',
  'score_sum double precision not null default 0',
  'scored_views integer not null default 0',
  'bitrate_ms_sum double precision not null default 0',
  'bitrate_ms bigint not null default 0',
  'upscale_ms_sum double precision not null default 0',
  'downscale_ms_sum double precision not null default 0',
  'scale_ms bigint not null default 0',
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table analytics_events add column if not exists player_height integer`);
  for (const c of HOURLY) await knex.raw(`alter table analytics_hourly add column if not exists ${c}`);
}

export async function down(knex: Knex): Promise<void> {
  for (const c of HOURLY) await knex.raw(`alter table analytics_hourly drop column if exists ${c.split(' ')[0]}`);
  await knex.raw(`alter table analytics_events drop column if exists player_height`);
}
