import type { Knex } from 'knex';

// Issue 49: "Upscaling 220.0 %". upscale_percentage/downscale_percentage become shares of the
// playback time (0–100 %): the time the picture was shown larger (smaller) than the rendition,
// over the time both heights were known. Three additive sums on the hourly and daily rows:
// `upscaled_ms`, `downscaled_ms` and `scale_time_ms` (the time with both heights known, counted
// from this version on: rows rolled up before it hold 0 in all three, so they count in neither
// side of the share). The experience score keeps the time-weighted upscale factor
// (upscale_ms_sum / scale_ms). Defaulted columns: metadata-only changes, no table rewrite.
const COLUMNS = ['upscaled_ms bigint not null default 0', 'downscaled_ms bigint not null default 0', 'scale_time_ms bigint not null default 0'];

export async function up(knex: Knex): Promise<void> {
  for (const table of ['analytics_hourly', 'analytics_daily']) for (const c of COLUMNS) await knex.raw(`alter table ${table} add column if not exists ${c}`);
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['analytics_hourly', 'analytics_daily']) for (const c of COLUMNS) await knex.raw(`alter table ${table} drop column if exists ${c.split(' ')[0]}`);
}
