import type { Knex } from 'knex';

// Concurrent viewers of a live stream (SPEC §18, lib/analytics/live.ts) read the last seconds of
// its raw events. Only live subjects are indexed, so videos' beacons pay nothing for it.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`create index if not exists analytics_events_live_recent on analytics_events (subject_id, received_at) where subject_id like 'ls\\_%'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop index if exists analytics_events_live_recent`);
}
