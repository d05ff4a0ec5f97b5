import type { Knex } from 'knex';

// POST /v1/upload/init checked the storage quota with a SUM over the workspace's videos, under the
// workspace's advisory lock: at a million videos every init read a million rows while holding it.
// workspaces.storage_used_bytes is that sum kept by a trigger on videos, in the same transaction
// as the change, so the check reads one row and stays exact. A video counts its size_bytes while
// it is not deleted and not an upload that expired unfinished (as the SUM did).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table workspaces add column storage_used_bytes bigint not null default 0`);
  await knex.raw(`
    create function video_storage_bytes(v videos) returns bigint language sql immutable as $$
      select case when v.deleted_at is null and not (v.status = 'failed' and coalesce(v.error_code, '') = 'upload_expired')
                  then coalesce(v.size_bytes, 0) else 0 end
    $$`);
  // Statement-level, from the transition tables: a bulk insert or update of many videos changes
  // each workspace's counter once, not once a row.
  await knex.raw(`
    create function videos_count_storage() returns trigger language plpgsql as $$
    begin
      with delta as (
        select workspace_id, sum(bytes) as bytes from (
          select n.workspace_id, video_storage_bytes(n) as bytes from new_rows n
          union all
          select o.workspace_id, -video_storage_bytes(o) from old_rows o
        ) x group by workspace_id
      )
      update workspaces w set storage_used_bytes = w.storage_used_bytes + d.bytes
        from delta d where w.id = d.workspace_id and d.bytes <> 0;
      return null;
    end $$`);
  // One trigger an event: a trigger with transition tables can only fire for one kind of event.
  await knex.raw(`create function videos_count_storage_insert() returns trigger language plpgsql as $$
    begin
      with delta as (select workspace_id, sum(video_storage_bytes(n)) as bytes from new_rows n group by workspace_id)
      update workspaces w set storage_used_bytes = w.storage_used_bytes + d.bytes from delta d where w.id = d.workspace_id and d.bytes <> 0;
      return null;
    end $$`);
  await knex.raw(`create function videos_count_storage_delete() returns trigger language plpgsql as $$
    begin
      with delta as (select workspace_id, sum(video_storage_bytes(o)) as bytes from old_rows o group by workspace_id)
      update workspaces w set storage_used_bytes = w.storage_used_bytes - d.bytes from delta d where w.id = d.workspace_id and d.bytes <> 0;
      return null;
    end $$`);
  await knex.raw(`create trigger videos_count_storage_insert after insert on videos referencing new table as new_rows
                  for each statement execute function videos_count_storage_insert()`);
  await knex.raw(`create trigger videos_count_storage_update after update on videos referencing old table as old_rows new table as new_rows
                  for each statement execute function videos_count_storage()`);
  await knex.raw(`create trigger videos_count_storage_delete after delete on videos referencing old table as old_rows
                  for each statement execute function videos_count_storage_delete()`);
  await knex.raw(`update workspaces w set storage_used_bytes = coalesce((select sum(video_storage_bytes(v)) from videos v where v.workspace_id = w.id), 0)`);
}

export async function down(knex: Knex): Promise<void> {
  for (const op of ['insert', 'update', 'delete']) await knex.raw(`drop trigger if exists videos_count_storage_${op} on videos`);
  for (const fn of ['videos_count_storage', 'videos_count_storage_insert', 'videos_count_storage_delete']) await knex.raw(`drop function if exists ${fn}()`);
  await knex.raw(`drop function if exists video_storage_bytes(videos)`);
  await knex.raw(`alter table workspaces drop column storage_used_bytes`);
}
