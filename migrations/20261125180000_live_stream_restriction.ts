import type { Knex } from 'knex';

// SPEC §20 for live streams: a stream names a playback restriction like a video does (null: the
// workspace's default applies). The CDN's live routes read it per request (no cached decision),
// so no notify trigger is needed; the recording video copies it when the broadcast starts.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table live_streams add column playback_restriction_id text references playback_restrictions(id) on delete set null`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table live_streams drop column if exists playback_restriction_id`);
}
