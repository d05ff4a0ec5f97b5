import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('workspaces', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.text('plan').notNullable().defaultTo('free');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(`alter table workspaces add constraint workspaces_plan_check
    check (plan in ('free','starter','pro','business'))`);

  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('name').notNullable().defaultTo('');
    // sha256 of the secret; the secret itself is shown once and never stored.
    t.text('key_hash').notNullable().unique();
    t.text('key_prefix').notNullable();
    t.text('access').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('last_used_at', { useTz: true });
    t.timestamp('revoked_at', { useTz: true });
    t.index(['workspace_id']);
  });
  await knex.raw(`alter table api_keys add constraint api_keys_access_check check (access in ('read','full'))`);

  await knex.schema.createTable('folders', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('parent_id').references('folders.id').onDelete('CASCADE');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'parent_id']);
  });

  await knex.schema.createTable('tags', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['workspace_id', 'name']);
  });

  await knex.schema.createTable('videos', (t) => {
    t.uuid('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('title').notNullable();
    t.text('description');
    t.text('visibility').notNullable().defaultTo('unlisted');
    t.text('status').notNullable();
    t.integer('progress').notNullable().defaultTo(0);
    t.double('duration_seconds');
    t.integer('width');
    t.integer('height');
    t.bigInteger('size_bytes');
    t.text('filename').notNullable();
    t.text('content_type');
    t.text('storage_key').notNullable();
    t.text('source_url');
    t.text('error_code');
    t.text('error_message');
    t.text('folder_id').references('folders.id').onDelete('SET NULL');
    t.boolean('thumbnail_ready').notNullable().defaultTo(false);
    t.timestamp('upload_expires_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('ready_at', { useTz: true });
    // Set by DELETE: the row disappears from the API at once, the workflow removes files, then the row.
    t.timestamp('deleted_at', { useTz: true });
  });
  await knex.raw(`alter table videos add constraint videos_visibility_check
    check (visibility in ('public','unlisted','private'))`);
  await knex.raw(`alter table videos add constraint videos_status_check
    check (status in ('pending_upload','processing','ready','failed'))`);
  // Keyset pagination: (created_at, id) per workspace, both directions.
  await knex.raw(`create index videos_ws_page on videos (workspace_id, created_at, id) where deleted_at is null`);
  await knex.raw(`create index videos_ws_folder on videos (workspace_id, folder_id) where deleted_at is null`);
  await knex.raw(`create index videos_title_lower on videos (workspace_id, lower(title))`);

  await knex.schema.createTable('renditions', (t) => {
    t.uuid('video_id').notNullable().references('videos.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.integer('ordinal').notNullable();
    t.integer('width').notNullable();
    t.integer('height').notNullable();
    t.integer('bitrate').notNullable();
    t.text('status').notNullable().defaultTo('queued');
    t.integer('progress').notNullable().defaultTo(0);
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['video_id', 'name']);
  });

  await knex.schema.createTable('video_tags', (t) => {
    t.uuid('video_id').notNullable().references('videos.id').onDelete('CASCADE');
    t.text('tag_id').notNullable().references('tags.id').onDelete('CASCADE');
    t.primary(['video_id', 'tag_id']);
    t.index(['tag_id']);
  });

  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('url').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.specificType('events', 'text[]'); // null = every event
    t.text('secret').notNullable();
    t.boolean('enabled').notNullable().defaultTo(true);
    t.text('disabled_reason');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('deleted_at', { useTz: true });
    t.index(['workspace_id']);
  });

  await knex.schema.createTable('events', (t) => {
    t.text('id').primary();
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.uuid('video_id');
    t.text('type').notNullable();
    t.jsonb('payload').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['workspace_id', 'created_at']);
  });

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.text('id').primary();
    t.text('endpoint_id').notNullable().references('webhook_endpoints.id').onDelete('CASCADE');
    t.text('event_id').notNullable().references('events.id').onDelete('CASCADE');
    t.text('status').notNullable().defaultTo('pending');
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('last_status_code');
    t.text('last_error');
    t.text('last_response_body');
    t.timestamp('next_attempt_at', { useTz: true });
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.unique(['endpoint_id', 'event_id']);
    t.index(['endpoint_id', 'created_at']);
  });

  // Fixed one-minute windows shared by every API process.
  await knex.schema.createTable('rate_limits', (t) => {
    t.text('key_id').notNullable();
    t.timestamp('window_start', { useTz: true }).notNullable();
    t.integer('count').notNullable().defaultTo(0);
    t.primary(['key_id', 'window_start']);
  });

  await knex.schema.createTable('bandwidth_usage', (t) => {
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.date('month').notNullable();
    t.bigInteger('bytes').notNullable().defaultTo(0);
    t.primary(['workspace_id', 'month']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of [
    'bandwidth_usage',
    'rate_limits',
    'webhook_deliveries',
    'events',
    'webhook_endpoints',
    'video_tags',
    'renditions',
    'videos',
    'tags',
    'folders',
    'api_keys',
    'workspaces',
  ]) {
    await knex.schema.dropTableIfExists(table);
  }
}
