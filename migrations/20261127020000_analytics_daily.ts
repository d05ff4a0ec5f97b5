import type { Knex } from 'knex';

// Daily rows (issue 36 item 1: reads at scale). A read over days (the default 7, up to 400)
// takes whole UTC days from these — one row per subject and day, the same columns as
// analytics_hourly with `hour` at the day's start — and only the range's partial days at its
// edges from the hourly rows, so a 30-day read sums ≈ 30 + 48 rows instead of 720 (and their
// retention histograms and breakdowns). The rollup rewrites the days its window touches, in the
// same transaction as their hours (lib/analytics/rollup.ts). Histograms add up through
// analytics_hist_sum, an aggregate of sparse jsonb histograms ({bucket: count}).
// analytics_hourly's additive columns as of this migration.
const SUMMED = [
  'views', 'new_viewers', 'watch_ms', 'started', 'startup_ms_sum', 'rebuffers', 'rebuffer_ms', 'errors', 'exits_before_start', 'bitrate_sum', 'bitrate_views',
  'startup_failures', 'playback_failures', 'score_sum', 'scored_views', 'bitrate_ms_sum', 'bitrate_ms', 'upscale_ms_sum', 'downscale_ms_sum', 'scale_ms',
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function analytics_hist_add(a jsonb, b jsonb) returns jsonb language sql immutable parallel safe as $$
      select coalesce(jsonb_object_agg(k, n), '{}'::jsonb) from (
        select k, sum(v::bigint) as n from (
          select * from jsonb_each_text(coalesce(a, '{}'::jsonb)) union all select * from jsonb_each_text(coalesce(b, '{}'::jsonb))
        ) x(k, v) group by k
      ) y
    $$`);
  await knex.raw(`drop aggregate if exists analytics_hist_sum(jsonb)`);
  await knex.raw(`create aggregate analytics_hist_sum(jsonb) (sfunc = analytics_hist_add, stype = jsonb, initcond = '{}')`);
  await knex.raw(`create table if not exists analytics_daily (like analytics_hourly including defaults, primary key (subject_id, hour))`);
  await knex.raw(`create index if not exists analytics_daily_workspace on analytics_daily (workspace_id, hour)`);
  await knex.raw(`create table if not exists analytics_daily_breakdowns (like analytics_hourly_breakdowns including defaults, primary key (subject_id, hour, dimension, value))`);
  // An existing deployment's hours, summed once (then the rollup keeps the days it touches).
  const summed = SUMMED.map((c) => `sum(${c})`).join(', ');
  await knex.raw(`
    insert into analytics_daily (hour, subject_id, workspace_id, ${SUMMED.join(', ')}, startup_hist, retention_hist)
    select date_trunc('day', hour at time zone 'UTC') at time zone 'UTC', subject_id, min(workspace_id), ${summed},
           analytics_hist_sum(startup_hist), case when bool_or(retention_hist is not null) then analytics_hist_sum(retention_hist) end
      from analytics_hourly group by 1, 2
    on conflict do nothing`);
  await knex.raw(`
    insert into analytics_daily_breakdowns (hour, subject_id, dimension, value, views, watch_ms)
    select date_trunc('day', hour at time zone 'UTC') at time zone 'UTC', subject_id, dimension, value, sum(views), sum(watch_ms)
      from analytics_hourly_breakdowns group by 1, 2, 3, 4
    on conflict do nothing`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table if exists analytics_daily_breakdowns, analytics_daily`);
  await knex.raw(`drop aggregate if exists analytics_hist_sum(jsonb)`);
  await knex.raw(`drop function if exists analytics_hist_add(jsonb, jsonb)`);
}
