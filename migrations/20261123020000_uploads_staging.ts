import type { Knex } from 'knex';

// Single-use upload URLs (SPEC §12): a new upload URL writes to a staging key that nothing reads
// (`uploads/<ws>/<video>/<nonce>`); completion moves it to the original key once. `upload_protocol`
// says whether the URL is a plain PUT or a tus resource; `cors_origin` is what the upload URL
// answers browsers with (SPEC §13). Rows created before this migration keep `upload_key` null and
// upload straight to their original key, as before.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('videos', (t) => {
    t.text('upload_key').nullable();
    t.text('upload_protocol').nullable();
    t.text('cors_origin').nullable();
    // Set by the API when a completion is accepted: the URL closes at once, before the workflow
    // writes `processing`.
    t.timestamp('upload_closed_at', { useTz: true }).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('videos', (t) => {
    t.dropColumn('upload_key');
    t.dropColumn('upload_protocol');
    t.dropColumn('cors_origin');
    t.dropColumn('upload_closed_at');
  });
}
