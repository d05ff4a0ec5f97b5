import type { Knex } from 'knex';

// GET /webhooks/{id}/deliveries pages newest first by (endpoint_id, id); dlv_ ids are time-ordered.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index webhook_deliveries_endpoint_page on webhook_deliveries (endpoint_id, id desc)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists webhook_deliveries_endpoint_page');
}
