import type { Knex } from 'knex';

// Idempotency-Key (SPEC §16): one row per workspace and key, the first answer kept for 24 h.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('idempotency_keys', (t) => {
    t.text('workspace_id').notNullable().references('id').inTable('workspaces').onDelete('CASCADE');
    t.string('key', 255).notNullable();
    t.text('fingerprint').notNullable();
    t.text('state').notNullable(); // running | done
    t.integer('response_status');
    t.jsonb('response_headers');
    t.jsonb('response_body');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('locked_until', { useTz: true }).notNullable();
    t.primary(['workspace_id', 'key']);
    t.index(['created_at'], 'idempotency_keys_created_at');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('idempotency_keys');
}
