import type { Knex } from 'knex';

/** People who sign in to the dashboard, their workspaces, their sessions and failed sign-ins. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('people', (t) => {
    t.text('id').primary();
    t.text('email').notNullable();
    // argon2id PHC string (salt and parameters inside it).
    t.text('password_hash').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('create unique index people_email_lower on people (lower(email))');

  await knex.schema.createTable('memberships', (t) => {
    t.text('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.text('workspace_id').notNullable().references('workspaces.id').onDelete('CASCADE');
    t.text('role').notNullable().defaultTo('member');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['person_id', 'workspace_id']);
    t.index(['workspace_id']);
  });
  await knex.raw(`alter table memberships add constraint memberships_role_check check (role in ('owner','member'))`);

  await knex.schema.createTable('sessions', (t) => {
    // sha256 of the cookie's token: a stolen database does not yield live sessions.
    t.text('token_hash').primary();
    t.text('person_id').notNullable().references('people.id').onDelete('CASCADE');
    t.text('workspace_id').references('workspaces.id').onDelete('SET NULL');
    t.text('csrf_token').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['person_id']);
  });

  await knex.schema.createTable('login_failures', (t) => {
    t.bigIncrements('id');
    t.text('email').notNullable();
    t.text('ip').notNullable();
    t.timestamp('at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['email', 'at']);
    t.index(['ip', 'at']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['login_failures', 'sessions', 'memberships', 'people']) await knex.schema.dropTableIfExists(table);
}
