import type { Knex } from 'knex';

// SPEC §17: live streams, the link from a recording (a video) to its stream, and the live
// ladder's segments (one row per rung and segment: the live playlists' sliding window and the
// recording's VOD playlists are both written from these rows).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('live_streams', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('title').notNullable().defaultTo('');
    t.text('visibility').notNullable().defaultTo('unlisted');
    t.text('latency_mode').notNullable().defaultTo('standard');
    t.integer('reconnect_window').notNullable().defaultTo(60);
    t.boolean('record').notNullable().defaultTo(true);
    t.jsonb('new_video_settings').notNullable().defaultTo('{}');
    t.jsonb('simulcast_targets').notNullable().defaultTo('[]');
    // Per target (by index): {status: 'idle'|'connecting'|'live'|'errored', error, updated_at}.
    t.jsonb('simulcast_status').notNullable().defaultTo('{}');
    t.text('passthrough');
    // sha256 of the stream key; the key itself is shown on create and on reset only.
    t.text('stream_key_hash').notNullable().unique();
    t.text('status').notNullable().defaultTo('idle');
    t.boolean('disabled').notNullable().defaultTo(false);
    t.uuid('active_video_id');
    // The media server's publishing session, while an encoder is connected (lib/live/ingest.ts).
    t.text('encoder_session');
    t.text('last_disconnect_reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true });
  });
  await knex.raw(`alter table live_streams add constraint live_streams_status_check check (status in ('idle','active','disconnected'))`);
  await knex.raw(`alter table live_streams add constraint live_streams_latency_check check (latency_mode in ('standard','low'))`);
  await knex.raw(`alter table live_streams add constraint live_streams_visibility_check check (visibility in ('public','unlisted','private'))`);
  await knex.raw(`create index live_streams_ws_page on live_streams (workspace_id, created_at, id) where deleted_at is null`);

  await knex.schema.alterTable('videos', (t) => {
    t.text('live_stream_id');
    t.boolean('is_live').notNullable().defaultTo(false);
    t.index(['live_stream_id', 'created_at']);
  });

  await knex.schema.createTable('live_segments', (t) => {
    t.uuid('video_id').notNullable().references('videos.id').onDelete('CASCADE');
    t.text('rung').notNullable();
    t.integer('seq').notNullable();
    t.double('duration').notNullable();
    t.bigInteger('bytes').notNullable().defaultTo(0);
    // The first segment after a reconnect or a replaced worker: #EXT-X-DISCONTINUITY before it.
    t.boolean('discontinuity').notNullable().defaultTo(false);
    t.timestamp('program_date_time', { useTz: true }).notNullable();
    t.primary(['video_id', 'rung', 'seq']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('live_segments');
  await knex.schema.alterTable('videos', (t) => {
    t.dropIndex(['live_stream_id', 'created_at']);
    t.dropColumn('is_live');
    t.dropColumn('live_stream_id');
  });
  await knex.schema.dropTable('live_streams');
}
