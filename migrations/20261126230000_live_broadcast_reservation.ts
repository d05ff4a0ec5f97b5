import type { Knex } from 'knex';

// Issue 33 row 4: the plan's concurrent-broadcast limit is reserved atomically at the key check
// (lib/live/key-check.ts), before the workflow marks the stream non-idle: three encoders starting
// at once on three streams of a Free workspace are one broadcast, not three.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table live_streams add column broadcast_reserved_at timestamptz`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table live_streams drop column broadcast_reserved_at`);
}
