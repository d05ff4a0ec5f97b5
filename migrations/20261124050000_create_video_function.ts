import type { Knex } from 'knex';

// POST /v1/upload/init took the workspace's quota lock and then made four round trips to the API
// (read the counter, insert the video, its tags, its workflow start) before COMMIT released it:
// every init of a workspace queued behind the one holding the lock while that one waited on a
// busy API process (bench:api: 9 of 10 pool connections waiting on the advisory lock, ~130/s).
// vidhost_create_video does it all in one statement, so the lock is held for the time the server
// takes, not for client round trips. The quota lock is the workspace row itself: the storage
// counter trigger updates it at the end of the insert, and the check reads the counter after that
// (every earlier creation committed, this one included), so two creations can still never both
// pass a quota only one fits in. A refusal raises SQLSTATE VH001 and the statement rolls back.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create function vidhost_create_video(v jsonb, tags jsonb, quota bigint, start_target text, start jsonb, lease_ms integer)
    returns void language plpgsql as $$
    declare
      vid uuid := (v->>'id')::uuid;
      ws text := v->>'workspace_id';
      cols text;
      used bigint;
    begin
      select string_agg(quote_ident(k), ', ') into cols from jsonb_object_keys(v) k;
      execute format('insert into videos (%s) select %s from jsonb_populate_record(null::videos, $1)', cols, cols) using v;
      select storage_used_bytes into used from workspaces where id = ws;
      if used > quota then
        raise exception 'storage quota exceeded' using errcode = 'VH001';
      end if;
      if jsonb_array_length(tags) > 0 then
        insert into tags (id, workspace_id, name)
          select t->>'id', ws, t->>'name' from jsonb_array_elements(tags) t
          on conflict (workspace_id, name) do nothing;
        insert into video_tags (video_id, tag_id)
          select vid, g.id from tags g where g.workspace_id = ws and g.name in (select t->>'name' from jsonb_array_elements(tags) t);
      end if;
      insert into video_workflow_starts (video_id, target, start, next_attempt_at)
        values (vid, start_target, start, now() + lease_ms * interval '1 millisecond');
    end $$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop function if exists vidhost_create_video(jsonb, jsonb, bigint, text, jsonb, integer)`);
}
