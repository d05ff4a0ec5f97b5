import type { Knex } from 'knex';

/**
 * Keys record who made them (issue 22): a person removed from a workspace takes the keys they
 * made there with them, and an owner made a member keeps no full-access key. In triggers, so
 * every way of removing someone (CLI, psql, deleting the person) revokes; the api_keys triggers
 * then tell every API process's key cache through NOTIFY.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('api_keys', (t) => {
    // No foreign key: deleting the person must not blank this before the membership trigger reads it.
    t.text('created_by');
    t.index(['created_by']);
  });
  await knex.raw(`
    create function vidhost_revoke_member_keys() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        update api_keys set revoked_at = now()
          where workspace_id = old.workspace_id and created_by = old.person_id and revoked_at is null;
      elsif new.role = 'member' and old.role <> 'member' then
        update api_keys set revoked_at = now()
          where workspace_id = old.workspace_id and created_by = old.person_id and access = 'full' and revoked_at is null;
      end if;
      return null;
    end $$;
    create trigger memberships_revoke_keys_delete after delete on memberships for each row execute function vidhost_revoke_member_keys();
    create trigger memberships_revoke_keys_update after update of role on memberships for each row execute function vidhost_revoke_member_keys();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists memberships_revoke_keys_delete on memberships;
    drop trigger if exists memberships_revoke_keys_update on memberships;
    drop function if exists vidhost_revoke_member_keys();
  `);
  await knex.schema.alterTable('api_keys', (t) => t.dropColumn('created_by'));
}
