import type { Knex } from 'knex';

// POST /v1/upload/init started the video's workflow before answering, so init ran at Temporal's
// start rate (and refused uploads while Temporal was down). Now the start is written in the same
// transaction as the video (a transactional outbox) and made right after the answer by the process
// that wrote it (lib/videos/starts.ts); any API process takes over rows whose lease has lapsed.
// `target` is the Temporal address and namespace the row is for: deployments (or test stacks)
// sharing a database never start each other's workflows on the wrong cluster.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table video_workflow_starts (
      video_id uuid primary key references videos(id) on delete cascade,
      target text not null,
      start jsonb not null,
      attempts integer not null default 0,
      last_error text,
      created_at timestamptz not null default now(),
      next_attempt_at timestamptz not null
    )`);
  await knex.raw(`create index video_workflow_starts_due on video_workflow_starts (target, next_attempt_at)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists video_workflow_starts`);
}
