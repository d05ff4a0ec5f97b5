import type { Knex } from 'knex';

// SPEC §24: watermark profiles (the image in storage, its placement here), named by videos and
// live streams, and a workspace's default. A deleted profile keeps its row and image
// (`deleted_at`): videos made with it keep their mark, and their later encodes (a re-run chunk,
// an on-request segment) still find it; only the API stops listing and accepting it.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table watermarks (
      id text primary key,
      workspace_id text not null references workspaces(id) on delete cascade,
      name text,
      storage_key text not null,
      content_type text not null,
      width integer not null,
      height integer not null,
      size_bytes integer not null,
      position text not null default 'bottom-right',
      padding double precision not null default 0.05,
      scale double precision not null default 0.15,
      opacity double precision not null default 1,
      created_at timestamptz not null default now(),
      deleted_at timestamptz,
      constraint watermarks_position_check check (position in ('top-left','top-right','bottom-left','bottom-right','center')),
      constraint watermarks_padding_check check (padding >= 0 and padding <= 0.5),
      constraint watermarks_scale_check check (scale >= 0 and scale <= 1),
      constraint watermarks_opacity_check check (opacity >= 0 and opacity <= 1)
    );
    create index watermarks_ws on watermarks (workspace_id, created_at, id) where deleted_at is null;
    alter table videos add column watermark_id text references watermarks(id);
    alter table live_streams add column watermark_id text references watermarks(id);
    alter table workspaces add column default_watermark_id text references watermarks(id) on delete set null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table workspaces drop column if exists default_watermark_id;
    alter table live_streams drop column if exists watermark_id;
    alter table videos drop column if exists watermark_id;
    drop table if exists watermarks;
  `);
}
