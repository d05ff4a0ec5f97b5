import type { Knex } from 'knex';

// The rollup also writes the current, partial hour: its buckets cover the views that started
// before `partial_before` (the run's time minus a settle margin for buffered beacons). A video's
// read takes everything before it from the aggregates and only the views started since from raw
// events (lib/analytics/read.ts). Null (a run before this change): the old split, by whole hours.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table analytics_rollup_state add column if not exists partial_before timestamptz`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table analytics_rollup_state drop column if exists partial_before`);
}
