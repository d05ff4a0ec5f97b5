import type { Knex } from 'knex';

// SPEC §22 "ending is final": when `complete` or `disable` ended the stream's broadcast. A WHIP
// publisher's automatic retry (`?resume=1`) is refused while it is set (409 broadcast_ended); a
// WHIP POST without it (its user starting again) clears it. Null: nothing was ended by hand.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table live_streams add column publish_ended_at timestamptz`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table live_streams drop column publish_ended_at`);
}
