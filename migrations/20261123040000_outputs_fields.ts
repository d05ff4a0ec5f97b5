import type { Knex } from 'knex';

// SPEC §14: per-video output settings, and the outputs made after `ready` (one row per file).
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('videos', (t) => {
    t.string('passthrough', 255).nullable();
    t.string('max_resolution', 8).nullable();
    t.string('mp4_support', 16).notNullable().defaultTo('none');
    t.uuid('source_video_id').nullable();
    t.boolean('storyboard_ready').notNullable().defaultTo(false);
  });
  await knex.schema.createTable('static_renditions', (t) => {
    t.uuid('video_id').notNullable().references('id').inTable('videos').onDelete('CASCADE');
    t.string('name', 64).notNullable();
    t.string('status', 16).notNullable();
    t.bigInteger('size_bytes').nullable();
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['video_id', 'name']);
  });
  await knex.schema.createTable('captions', (t) => {
    t.uuid('video_id').notNullable().references('id').inTable('videos').onDelete('CASCADE');
    t.string('language', 35).notNullable();
    t.string('label', 100).notNullable();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.string('status', 16).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['video_id', 'language']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('captions');
  await knex.schema.dropTable('static_renditions');
  await knex.schema.alterTable('videos', (t) => {
    t.dropColumn('storyboard_ready');
    t.dropColumn('source_video_id');
    t.dropColumn('mp4_support');
    t.dropColumn('max_resolution');
    t.dropColumn('passthrough');
  });
}
