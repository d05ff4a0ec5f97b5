import type { Knex } from 'knex';

// Live latency as the players report it (issue 36 item 5): how far behind the live edge the
// viewer plays, in ms, on each beacon of a live view. Nullable: a metadata-only change.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table analytics_events add column if not exists latency_ms integer`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table analytics_events drop column if exists latency_ms`);
}
