import type { Knex } from 'knex';

// Issue 22.
// - videos.passthrough_rendition: the passthrough's entry while the published master lists it
//   (written with the master, under its lock), so reads show the rendition the video plays from
//   and on-demand images render from it before the ladder lands.
// - videos.derived_bytes: bytes of the on-demand images (thumbnails, animated) stored for the
//   video. They count in the workspace's storage like the video's own size: video_storage_bytes
//   adds them, so the statement-level counter triggers keep workspaces.storage_used_bytes exact.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table videos add column passthrough_rendition jsonb, add column derived_bytes bigint not null default 0`);
  await knex.raw(`
    create or replace function video_storage_bytes(v videos) returns bigint language sql immutable as $$
      select case when v.deleted_at is null and not (v.status = 'failed' and coalesce(v.error_code, '') = 'upload_expired')
                  then coalesce(v.size_bytes, 0) + coalesce(v.derived_bytes, 0) else 0 end
    $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function video_storage_bytes(v videos) returns bigint language sql immutable as $$
      select case when v.deleted_at is null and not (v.status = 'failed' and coalesce(v.error_code, '') = 'upload_expired')
                  then coalesce(v.size_bytes, 0) else 0 end
    $$`);
  await knex.raw(`update workspaces w set storage_used_bytes = coalesce((select sum(video_storage_bytes(v)) from videos v where v.workspace_id = w.id), 0)`);
  await knex.raw(`alter table videos drop column passthrough_rendition, drop column derived_bytes`);
}
