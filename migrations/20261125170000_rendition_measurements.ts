import type { Knex } from 'knex';

// Issue 28 (SPEC §21): what each rendition really is, measured after encoding. `bitrate` becomes
// the measured average once known; `peak_bitrate` is the highest segment's bitrate (the master
// playlist's BANDWIDTH); `ssim_db`/`psnr_db` its quality against the source scaled to the rung.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('renditions', (t) => {
    t.integer('peak_bitrate').nullable();
    t.float('ssim_db').nullable();
    t.float('psnr_db').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('renditions', (t) => {
    t.dropColumn('peak_bitrate');
    t.dropColumn('ssim_db');
    t.dropColumn('psnr_db');
  });
}
