import type { Knex } from 'knex';

// GET /videos/{id} and GET /videos are answered from a per-process cache (lib/videos/readCache.ts).
// Every table a video's read shape is built from tells every process what changed, in the same
// transaction as the change: '<workspace>:<video uuid>' for one video (its entry and the
// workspace's list pages go), '<workspace>:*' for anything wider (a new video, a renamed tag, a
// bulk change of more than 100 videos). Statement-level with transition tables, so a bulk insert
// (the million-video seed) sends one notification, not one a row.
const TABLES = ['videos', 'renditions', 'video_tags', 'static_renditions', 'captions', 'tags'];

export async function up(knex: Knex): Promise<void> {
  // The player page's decision now carries storyboard_ready (it was a query a page view), so the
  // playback trigger (20261123050200) must fire when it changes too.
  await knex.raw(`
    create or replace trigger videos_notify_playback after update on videos for each row
      when (old.visibility is distinct from new.visibility or old.status is distinct from new.status
            or old.deleted_at is distinct from new.deleted_at or old.title is distinct from new.title
            or old.storyboard_ready is distinct from new.storyboard_ready)
      execute function vidhost_notify_playback_video()`);
  await knex.raw(`
    create function vidhost_notify_reads() returns trigger language plpgsql as $$
    declare
      changes text[];
    begin
      if tg_table_name = 'videos' then
        select array_agg(distinct c.workspace_id || ':' || case when tg_op = 'INSERT' then '*' else c.id::text end) into changes from changed c;
      elsif tg_table_name = 'tags' then
        select array_agg(distinct c.workspace_id || ':*') into changes from changed c;
      else
        select array_agg(distinct v.workspace_id || ':' || c.video_id::text) into changes from changed c join videos v on v.id = c.video_id;
      end if;
      if coalesce(array_length(changes, 1), 0) > 100 then
        select array_agg(distinct split_part(x, ':', 1) || ':*') into changes from unnest(changes) x;
      end if;
      perform pg_notify('vidhost_reads', x) from unnest(changes) x;
      return null;
    end $$`);
  // A trigger with transition tables fires for one kind of event only: three a table.
  for (const t of TABLES) {
    await knex.raw(`create trigger ${t}_notify_reads_insert after insert on ${t} referencing new table as changed for each statement execute function vidhost_notify_reads()`);
    await knex.raw(`create trigger ${t}_notify_reads_update after update on ${t} referencing new table as changed for each statement execute function vidhost_notify_reads()`);
    await knex.raw(`create trigger ${t}_notify_reads_delete after delete on ${t} referencing old table as changed for each statement execute function vidhost_notify_reads()`);
  }
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace trigger videos_notify_playback after update on videos for each row
      when (old.visibility is distinct from new.visibility or old.status is distinct from new.status
            or old.deleted_at is distinct from new.deleted_at or old.title is distinct from new.title)
      execute function vidhost_notify_playback_video()`);
  for (const t of TABLES) for (const op of ['insert', 'update', 'delete']) await knex.raw(`drop trigger if exists ${t}_notify_reads_${op} on ${t}`);
  await knex.raw(`drop function if exists vidhost_notify_reads()`);
}
