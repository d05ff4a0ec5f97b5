import type { Knex } from 'knex';

// GET /videos?tag= at a million videos (docs/performance.md): walking the workspace's page index
// and probing video_tags for each row reads ~100 rows per match for a tag on 1 % of the videos.
// video_tags gets a copy of its video's created_at (set by a trigger on insert; a video's
// created_at never changes), and an index in list order per tag, so a tagged page walks that
// index from the cursor and stops after limit+1 rows, like every other filter.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table video_tags add column video_created_at timestamptz`);
  await knex.raw(`update video_tags vt set video_created_at = v.created_at from videos v where v.id = vt.video_id`);
  await knex.raw(`alter table video_tags alter column video_created_at set not null`);
  await knex.raw(`
    create function video_tags_copy_created_at() returns trigger language plpgsql as $$
    begin
      select created_at into new.video_created_at from videos where id = new.video_id;
      return new;
    end $$`);
  await knex.raw(`create trigger video_tags_created_at before insert or update of video_id on video_tags
                  for each row execute function video_tags_copy_created_at()`);
  await knex.raw(`create index video_tags_tag_page on video_tags (tag_id, video_created_at, video_id)`);
  // The (tag_id) index is a prefix of the new one.
  await knex.raw(`drop index if exists video_tags_tag_id_index`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`create index if not exists video_tags_tag_id_index on video_tags (tag_id)`);
  await knex.raw(`drop index if exists video_tags_tag_page`);
  await knex.raw(`drop trigger if exists video_tags_created_at on video_tags`);
  await knex.raw(`drop function if exists video_tags_copy_created_at()`);
  await knex.raw(`alter table video_tags drop column video_created_at`);
}
