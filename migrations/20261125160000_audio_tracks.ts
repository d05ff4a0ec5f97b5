import type { Knex } from 'knex';

// SPEC §19: a video's audio renditions (one row per published rendition: a source stream in
// stereo, its 5.1 original, or an added track), the measured loudness, and how the video's
// audio is laid out: null = muxed into every rung (videos encoded before audio-v1),
// 'group' = an HLS AUDIO group beside video-only rungs, 'audio_only' = an audio-only ladder.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('videos', (t) => {
    t.boolean('normalize_audio').notNullable().defaultTo(false);
    t.double('loudness_lufs').nullable();
    t.string('audio_layout', 16).nullable();
  });
  await knex.schema.createTable('audio_tracks', (t) => {
    t.uuid('video_id').notNullable().references('id').inTable('videos').onDelete('CASCADE');
    t.string('rendition', 48).notNullable();
    t.integer('ordinal').notNullable().defaultTo(0);
    t.string('language', 35).notNullable();
    t.string('name', 100).notNullable();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.smallint('channels').notNullable().defaultTo(2);
    t.integer('bitrate').notNullable().defaultTo(128000);
    t.string('status', 16).notNullable();
    t.string('origin', 8).notNullable().defaultTo('source');
    t.double('loudness_lufs').nullable();
    t.text('error_message').nullable();
    // An added track (POST /videos/{id}/audio-tracks): where its upload URL writes, or the URL it is fetched from.
    t.string('upload_key', 512).nullable();
    t.text('source_url').nullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['video_id', 'rendition']);
  });
  // The read cache (migration read_cache_notify) drops a video's entry when its tracks change.
  for (const op of ['insert', 'update', 'delete']) {
    const table = op === 'delete' ? 'old' : 'new';
    await knex.raw(`create trigger audio_tracks_notify_reads_${op} after ${op} on audio_tracks referencing ${table} table as changed for each statement execute function vidhost_notify_reads()`);
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audio_tracks');
  await knex.schema.alterTable('videos', (t) => {
    t.dropColumn('audio_layout');
    t.dropColumn('loudness_lufs');
    t.dropColumn('normalize_audio');
  });
}
