import type { Knex } from 'knex';

// Every API process caches key lookups (lib/keyCache.ts); these triggers tell them all, through
// NOTIFY, when a key stops being what they cached: revoked, deleted, access changed, or its
// workspace's plan changed or the workspace went away. In a trigger, so every writer
// (API, admin CLI, psql) is covered. last_used_at updates do not notify.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function vidhost_notify_key() returns trigger language plpgsql as $$
    begin
      perform pg_notify('vidhost_keys', 'key:' || old.key_hash);
      return null;
    end $$;
    create trigger api_keys_notify_update after update on api_keys for each row
      when (old.revoked_at is distinct from new.revoked_at or old.access is distinct from new.access
            or old.key_hash is distinct from new.key_hash or old.workspace_id is distinct from new.workspace_id)
      execute function vidhost_notify_key();
    create trigger api_keys_notify_delete after delete on api_keys for each row execute function vidhost_notify_key();

    create function vidhost_notify_workspace() returns trigger language plpgsql as $$
    begin
      perform pg_notify('vidhost_keys', 'ws:' || old.id);
      return null;
    end $$;
    create trigger workspaces_notify_update after update on workspaces for each row
      when (old.plan is distinct from new.plan)
      execute function vidhost_notify_workspace();
    create trigger workspaces_notify_delete after delete on workspaces for each row execute function vidhost_notify_workspace();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists api_keys_notify_update on api_keys;
    drop trigger if exists api_keys_notify_delete on api_keys;
    drop trigger if exists workspaces_notify_update on workspaces;
    drop trigger if exists workspaces_notify_delete on workspaces;
    drop function if exists vidhost_notify_key();
    drop function if exists vidhost_notify_workspace();
  `);
}
