import type { Knex } from 'knex';

// The CDN and the player cache playback decisions per process (lib/playback/accessCache.ts).
// (Titles too: the player page shows them.)
// These triggers push what can change a decision to every process: a video's visibility, status
// or deletion; a rendition finishing (the master playlist's caching); a workspace's plan or
// bandwidth use. The cache's TTL is only the backstop for a lost notification.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function vidhost_notify_playback_video() returns trigger language plpgsql as $$
    begin
      perform pg_notify('vidhost_playback', 'video:' || old.id);
      return null;
    end $$;
    create function vidhost_notify_playback_rendition() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        perform pg_notify('vidhost_playback', 'video:' || new.video_id);
      else
        perform pg_notify('vidhost_playback', 'video:' || old.video_id);
      end if;
      return null;
    end $$;
    create trigger videos_notify_playback after update on videos for each row
      when (old.visibility is distinct from new.visibility or old.status is distinct from new.status
            or old.deleted_at is distinct from new.deleted_at or old.title is distinct from new.title)
      execute function vidhost_notify_playback_video();
    create trigger videos_notify_playback_delete after delete on videos for each row execute function vidhost_notify_playback_video();
    create trigger renditions_notify_playback after update on renditions for each row
      when (old.status is distinct from new.status)
      execute function vidhost_notify_playback_rendition();
    create trigger renditions_notify_playback_rows after insert or delete on renditions for each row
      execute function vidhost_notify_playback_rendition();

    create function vidhost_notify_playback_workspace() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform pg_notify('vidhost_playback', 'ws:' || old.workspace_id);
      else
        perform pg_notify('vidhost_playback', 'ws:' || new.workspace_id);
      end if;
      return null;
    end $$;
    create trigger bandwidth_usage_notify_playback after insert or update or delete on bandwidth_usage for each row
      execute function vidhost_notify_playback_workspace();
    create function vidhost_notify_playback_plan() returns trigger language plpgsql as $$
    begin
      perform pg_notify('vidhost_playback', 'ws:' || new.id);
      return null;
    end $$;
    create trigger workspaces_notify_playback after update on workspaces for each row
      when (old.plan is distinct from new.plan)
      execute function vidhost_notify_playback_plan();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists videos_notify_playback on videos;
    drop trigger if exists videos_notify_playback_delete on videos;
    drop trigger if exists renditions_notify_playback on renditions;
    drop trigger if exists renditions_notify_playback_rows on renditions;
    drop trigger if exists bandwidth_usage_notify_playback on bandwidth_usage;
    drop trigger if exists workspaces_notify_playback on workspaces;
    drop function if exists vidhost_notify_playback_video();
    drop function if exists vidhost_notify_playback_rendition();
    drop function if exists vidhost_notify_playback_workspace();
    drop function if exists vidhost_notify_playback_plan();
  `);
}
