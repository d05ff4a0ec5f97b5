import type { Knex } from 'knex';

// SPEC §20: playback restrictions (referrer allow-lists), which a video or the workspace's default
// names, and AES-128 encryption per video with its key stored wrapped (lib/protection).
//
// The CDN and the player cache their playback decisions per process (lib/playback/accessCache.ts),
// and a decision now carries the restriction. So every change that can alter one is pushed on
// vidhost_playback like the earlier triggers (20261123050200): a restriction's row → 'ws:<id>' (a
// workspace's entries go), a video's restriction or encryption → 'video:<uuid>', a workspace's
// defaults → 'ws:<id>'. Separate triggers, so other migrations that rewrite the earlier
// videos_notify_playback condition cannot drop these columns from it.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table playback_restrictions (
      id text primary key,
      workspace_id text not null references workspaces(id) on delete cascade,
      allowed_domains text[] not null default '{}',
      allow_no_referrer boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index playback_restrictions_ws on playback_restrictions (workspace_id, created_at, id);

    alter table videos add column playback_restriction_id text references playback_restrictions(id) on delete set null;
    alter table videos add column encryption text;
    alter table videos add constraint videos_encryption_check check (encryption in ('none', 'aes-128'));
    alter table workspaces add column default_playback_restriction_id text references playback_restrictions(id) on delete set null;
    alter table workspaces add column default_encryption text not null default 'none';
    alter table workspaces add constraint workspaces_default_encryption_check check (default_encryption in ('none', 'aes-128'));

    -- A video created without an encryption setting takes the workspace's default at creation, so
    -- changing the default later leaves existing videos as they are. A trigger, not a read in
    -- the API: creation stays one statement (vidhost_create_video).
    create function vidhost_video_default_encryption() returns trigger language plpgsql as $$
    begin
      if new.encryption is null then
        select default_encryption into new.encryption from workspaces where id = new.workspace_id;
      end if;
      return new;
    end $$;
    create trigger videos_default_encryption before insert on videos for each row execute function vidhost_video_default_encryption();
    update videos set encryption = 'none' where encryption is null;

    -- Per-video AES-128 content keys, wrapped (AES-256-GCM) by the master key named by master_kid.
    create table video_keys (
      video_id uuid primary key references videos(id) on delete cascade,
      master_kid text not null,
      wrapped bytea not null,
      created_at timestamptz not null default now(),
      rewrapped_at timestamptz
    );

    create function vidhost_notify_playback_restriction() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform pg_notify('vidhost_playback', 'ws:' || old.workspace_id);
      else
        perform pg_notify('vidhost_playback', 'ws:' || new.workspace_id);
      end if;
      return null;
    end $$;
    create trigger playback_restrictions_notify after insert or update or delete on playback_restrictions
      for each row execute function vidhost_notify_playback_restriction();
    create trigger videos_notify_playback_protection after update on videos for each row
      when (old.playback_restriction_id is distinct from new.playback_restriction_id or old.encryption is distinct from new.encryption)
      execute function vidhost_notify_playback_video();
    create trigger workspaces_notify_playback_protection after update on workspaces for each row
      when (old.default_playback_restriction_id is distinct from new.default_playback_restriction_id
            or old.default_encryption is distinct from new.default_encryption)
      execute function vidhost_notify_playback_plan();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists workspaces_notify_playback_protection on workspaces;
    drop trigger if exists videos_notify_playback_protection on videos;
    drop trigger if exists playback_restrictions_notify on playback_restrictions;
    drop function if exists vidhost_notify_playback_restriction();
    drop table if exists video_keys;
    drop trigger if exists videos_default_encryption on videos;
    drop function if exists vidhost_video_default_encryption();
    alter table workspaces drop column if exists default_encryption;
    alter table workspaces drop column if exists default_playback_restriction_id;
    alter table videos drop column if exists encryption;
    alter table videos drop column if exists playback_restriction_id;
    drop table if exists playback_restrictions;
  `);
}
