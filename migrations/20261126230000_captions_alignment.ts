import type { Knex } from 'knex';

// Issue 37: captions from a transcript by forced alignment. A track is `aligning` while the
// aligner runs, then `ready` or `failed`; a failed one says why (error_code, error_message).
// `origin` tells a file the creator sent (`file`) from one we timed (`aligned`).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table captions add column error_code text, add column error_message text, add column origin text not null default 'file'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table captions drop column error_code, drop column error_message, drop column origin`);
}
