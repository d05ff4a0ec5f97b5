import type { Knex } from 'knex';

// Viewer analytics (SPEC §18, docs/analytics.md).
//
// analytics_events: raw beacons, range-partitioned by `day` (UTC day received). Partitions are
// made ahead by the rollup activity (analytics_ensure_partitions) and dropped after
// ANALYTICS_RAW_DAYS; the default partition only catches rows if that ever fell behind.
// (view_id, seq) is unique per day: a partitioned table's unique index must hold the partition key.
// Per-view facts (workspace, viewer hash, browser/OS/device, player) are stored on the
// `viewstart` row only; the others carry what changes during a view.
//
// analytics_hourly / analytics_hourly_breakdowns: the rollup, one row per (hour, subject) where a
// subject is a video (its UUID), a live stream (ls_…) or a whole workspace (ws_…). Kept for good.
// Histograms (startup time, furthest position) are sparse jsonb {bucket: count} so hours add up exactly.
//
// analytics_salts: one random salt per UTC day for the unique-viewer hash, deleted once its day is over.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table analytics_events (
      day date not null,
      received_at timestamptz not null,
      view_id uuid not null,
      seq integer not null,
      subject_id text not null,
      event text not null,
      position real,
      elapsed_ms integer,
      watch_ms integer,
      bitrate integer,
      rendition text,
      error_code text,
      workspace_id text,
      viewer_hash bigint,
      browser text,
      os text,
      device text,
      player text
    ) partition by range (day)`);
  await knex.raw(`create unique index analytics_events_view_seq on analytics_events (view_id, seq, day)`);
  await knex.raw(`create index analytics_events_subject_starts on analytics_events (subject_id, received_at) where event = 'viewstart'`);
  await knex.raw(`create index analytics_events_workspace_starts on analytics_events (workspace_id, received_at) where event = 'viewstart'`);
  await knex.raw(`create index analytics_events_starts on analytics_events (received_at) where event = 'viewstart'`);
  await knex.raw(`create table analytics_events_default partition of analytics_events default`);
  await knex.raw(`
    create function analytics_ensure_partitions(first_day date, last_day date) returns void language plpgsql as $$
    declare d date := first_day;
    begin
      while d <= last_day loop
        if to_regclass('analytics_events_' || to_char(d, 'YYYYMMDD')) is null then
          execute format('create table if not exists %I partition of analytics_events for values from (%L) to (%L)',
                         'analytics_events_' || to_char(d, 'YYYYMMDD'), d, d + 1);
        end if;
        d := d + 1;
      end loop;
    end $$`);
  await knex.raw(`select analytics_ensure_partitions(current_date - 1, current_date + 7)`);

  await knex.raw(`
    create table analytics_hourly (
      hour timestamptz not null,
      subject_id text not null,
      workspace_id text not null,
      views integer not null,
      new_viewers integer not null,
      watch_ms bigint not null,
      started integer not null,
      startup_ms_sum bigint not null,
      startup_hist jsonb not null,
      rebuffers integer not null,
      rebuffer_ms bigint not null,
      errors integer not null,
      exits_before_start integer not null,
      bitrate_sum double precision not null,
      bitrate_views integer not null,
      retention_hist jsonb,
      primary key (subject_id, hour)
    )`);
  await knex.raw(`create index analytics_hourly_workspace on analytics_hourly (workspace_id, hour)`);
  await knex.raw(`
    create table analytics_hourly_breakdowns (
      hour timestamptz not null,
      subject_id text not null,
      dimension text not null,
      value text not null,
      views integer not null,
      watch_ms bigint not null,
      primary key (subject_id, hour, dimension, value)
    )`);
  await knex.raw(`create table analytics_salts (day date primary key, salt bytea not null)`);
  // Up to which hour the rollup is final; later hours are computed from raw events at read time.
  await knex.raw(`
    create table analytics_rollup_state (
      id boolean primary key default true check (id),
      final_before timestamptz not null,
      last_run_at timestamptz not null
    )`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists analytics_rollup_state, analytics_salts, analytics_hourly_breakdowns, analytics_hourly, analytics_events cascade`);
  await knex.raw(`drop function if exists analytics_ensure_partitions(date, date)`);
}
