import type { Knex } from 'knex';

// GET /videos at a million videos a workspace (docs/performance.md). Each filter gets a keyset
// index in list order, so a deep page walks the index from the cursor and stops after limit+1
// rows instead of sorting or skipping through other rows; `q` uses trigrams (pg_trgm, in
// PostgreSQL's contrib) on lower(title), the expression the list query searches.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create extension if not exists pg_trgm');
  await knex.raw(`create index videos_ws_status_page on videos (workspace_id, status, created_at, id) where deleted_at is null`);
  await knex.raw(`create index videos_ws_visibility_page on videos (workspace_id, visibility, created_at, id) where deleted_at is null`);
  await knex.raw(`create index videos_ws_folder_page on videos (workspace_id, folder_id, created_at, id) where deleted_at is null`);
  await knex.raw(`drop index if exists videos_ws_folder`);
  await knex.raw(`create index videos_title_trgm on videos using gin (lower(title) gin_trgm_ops) where deleted_at is null`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop index if exists videos_title_trgm`);
  await knex.raw(`create index if not exists videos_ws_folder on videos (workspace_id, folder_id) where deleted_at is null`);
  await knex.raw(`drop index if exists videos_ws_folder_page`);
  await knex.raw(`drop index if exists videos_ws_visibility_page`);
  await knex.raw(`drop index if exists videos_ws_status_page`);
  // The extension stays: other objects may have come to depend on it.
}
