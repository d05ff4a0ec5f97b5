import type { Knex } from 'knex';

// Geography without addresses (issue 36 item 6): the viewer's country, resolved at ingest from an
// offline database (lib/analytics/country.ts) on the `viewstart` row only; the address is never
// stored. Nullable: a metadata-only change.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table analytics_events add column if not exists country text`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table analytics_events drop column if exists country`);
}
