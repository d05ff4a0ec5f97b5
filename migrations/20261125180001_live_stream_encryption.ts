import type { Knex } from 'knex';

// SPEC §20 AES-128 for live streams: a stream's `encryption`, defaulted from the workspace's at
// creation by the same trigger function videos use (20261125150000), and copied to each
// recording when its broadcast starts: the CDN encrypts the live segments with the recording's
// key, so the live window and the finished recording are one ciphertext under one key.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table live_streams add column encryption text;
    alter table live_streams add constraint live_streams_encryption_check check (encryption in ('none', 'aes-128'));
    create trigger live_streams_default_encryption before insert on live_streams for each row execute function vidhost_video_default_encryption();
    update live_streams set encryption = 'none' where encryption is null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists live_streams_default_encryption on live_streams;
    alter table live_streams drop column if exists encryption;
  `);
}
