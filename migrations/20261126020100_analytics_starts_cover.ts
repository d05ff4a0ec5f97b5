import type { Knex } from 'knex';

// A video's read computes the current hour from raw events, and its new viewers from the
// video's `viewstart` rows of the UTC day so far (lib/analytics/aggregate.ts, `s0`). Covering
// those columns makes that an index-only scan instead of one heap page per start; it replaces
// the plain (subject_id, received_at) index on starts.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create index if not exists analytics_events_subject_starts_cover on analytics_events (subject_id, received_at)
      include (view_id, day, workspace_id, viewer_hash, browser, os, device) where event = 'viewstart'`);
  await knex.raw(`drop index if exists analytics_events_subject_starts`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`create index if not exists analytics_events_subject_starts on analytics_events (subject_id, received_at) where event = 'viewstart'`);
  await knex.raw(`drop index if exists analytics_events_subject_starts_cover`);
}
