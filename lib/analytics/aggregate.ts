import { raw, sql, type Fragment } from './sql';

/**
 * Upper bounds (ms) of the startup-time histogram's buckets; bucket i holds values below
 * STARTUP_BUCKETS_MS[i] (and at least the previous bound), the last one everything above.
 */
export const STARTUP_BUCKETS_MS = [
  50, 100, 150, 200, 250, 300, 400, 500, 600, 700, 800, 900, 1000, 1250, 1500, 1750, 2000, 2500, 3000, 3500, 4000, 5000, 6000, 7000, 8000, 10000, 12500,
  15000, 20000, 30000, 45000, 60000,
];
/** Retention is kept in 101 steps of a video's duration (0 %, 1 %, … 100 %). */
export const RETENTION_STEPS = 100;

/**
 * Senders without the player's clock (SPEC-only): the playhead may advance between two events by
 * at most the receipt times' difference plus this (the sender's batching and the network), and a
 * view's watch time is at most its span on the server's clock plus VIEW_SLACK_MS (one heartbeat).
 */
export const GAP_SLACK_MS = 2000;
export const VIEW_SLACK_MS = 10_000;

/**
 * The per-view viewer experience score's startup part: 1 up to `startupFreeMs`, then
 * exp(−(startup − free) / scale): 1 s → 0.94, 2 s → 0.83, 5 s → 0.57, 10 s → 0.31.
 */
export const SCORE = { startupFreeMs: 500, startupScaleMs: 8000 };

/** The columns of analytics_hourly, in the order hourlySql answers them. */
export const HOUR_COLUMNS = `hour, subject_id, workspace_id, views, new_viewers, watch_ms, started, startup_ms_sum, startup_hist, rebuffers, rebuffer_ms,
  errors, exits_before_start, bitrate_sum, bitrate_views, retention_hist, startup_failures, playback_failures, score_sum, scored_views,
  bitrate_ms_sum, bitrate_ms, upscale_ms_sum, downscale_ms_sum, scale_ms, upscaled_ms, downscaled_ms, scale_time_ms`;

/** Which views an aggregation covers: every subject (the rollup), one subject, or one workspace (with its videos). */
export type Scope = { kind: 'all' } | { kind: 'subject'; subjectId: string } | { kind: 'workspace'; workspaceId: string };

export interface HourRow {
  hour: Date;
  subject_id: string;
  workspace_id: string;
  views: number;
  new_viewers: number;
  watch_ms: number;
  started: number;
  startup_ms_sum: number;
  startup_hist: Record<string, number>;
  rebuffers: number;
  rebuffer_ms: number;
  errors: number;
  exits_before_start: number;
  bitrate_sum: number;
  bitrate_views: number;
  retention_hist: Record<string, number> | null;
  /** Views whose play intent never reached a first frame because of an error. */
  startup_failures: number;
  /** Views that failed with an error after their first frame. */
  playback_failures: number;
  /** Sum and count of the per-view viewer experience scores (0–100; exits before start have none). */
  score_sum: number;
  scored_views: number;
  /** Σ bitrate × ms played, and the ms played with a known bitrate (time-weighted bitrate). */
  bitrate_ms_sum: number;
  bitrate_ms: number;
  /** Σ scale factor × ms played (up: player/rendition − 1; down: 1 − player/rendition), and ms with both heights known. */
  upscale_ms_sum: number;
  downscale_ms_sum: number;
  scale_ms: number;
  /** ms played shown larger / smaller than the rendition, and ms with both heights known: upscale/downscale % (0–100). */
  upscaled_ms: number;
  downscaled_ms: number;
  scale_time_ms: number;
}

export interface BreakdownRow {
  hour: Date;
  subject_id: string;
  dimension: 'browser' | 'os' | 'device' | 'rendition' | 'country';
  value: string;
  views: number;
  watch_ms: number;
}

const scopeFilter = (scope: Scope): Fragment =>
  scope.kind === 'subject' ? sql` and subject_id = ${scope.subjectId}` : scope.kind === 'workspace' ? sql` and workspace_id = ${scope.workspaceId}` : raw('');

/**
 * The per-view metrics of every view that started (its `viewstart` arrived) in [from, to), as
 * CTEs `pv` (one row per view and subject; a workspace scope adds a copy of each view under the
 * workspace's id) and `s0` (the starts of the day so far, for first-seen viewers).
 *
 * A view's events count when they arrive before its start hour + `lateHours`: that is what makes
 * an hour final (nothing can change it after hour + lateHours) and the rollup re-runnable.
 * Events must name the view's own subject: a forged view_id cannot add to someone else's video.
 */
function perView(scope: Scope, from: Date, to: Date, lateHours: number): Fragment {
  const dayStart = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
  const lateTo = new Date(to.getTime() + lateHours * 3600_000);
  const d = (t: Date) => t.toISOString().slice(0, 10);
  const fromHour = new Date(Math.floor(from.getTime() / 3600_000) * 3600_000);
  // A workspace scope counts each view twice: under its subject and under the workspace's id.
  const copies = scope.kind === 'subject' ? raw('') : raw(`union all select m2.*, true as is_ws, m2.workspace_id as own_id from m2`);
  return sql`
    s0 as (
      select view_id, subject_id, workspace_id, date_trunc('hour', received_at) as hour, day, received_at, viewer_hash, browser, os, device
        from analytics_events
       where event = 'viewstart' and day >= ${d(dayStart)}::date and day <= ${d(to)}::date
         and received_at >= ${dayStart.toISOString()}::timestamptz and received_at < ${to.toISOString()}::timestamptz ${scopeFilter(scope)}
    ),
    v as (
      select distinct on (view_id) * from s0 where received_at >= ${from.toISOString()}::timestamptz order by view_id, received_at
    ),
    ev as (
      -- Per view through the (view_id, seq, day) index: a video's recent views cost their own
      -- events, never a scan of everyone's events in the window. Events count from the start
      -- hour's beginning even when \`from\` is mid-hour (a read's raw part), as in the rollup.
      select v.view_id, v.subject_id, v.workspace_id, v.hour, v.day, v.viewer_hash, v.browser, v.os, v.device, e.event, e.position, e.elapsed_ms, e.watch_ms, e.bitrate, e.rendition, e.received_at, e.player_height, e.country,
             lead(e.watch_ms) over w as next_watch, lead(e.elapsed_ms) over w as next_elapsed, lead(e.position) over w as next_position,
             lead(e.event) over w as next_event, lead(e.received_at) over w as next_received
        from v cross join lateral (
          select * from analytics_events e
           where e.view_id = v.view_id and e.subject_id = v.subject_id
             and e.day >= ${d(fromHour)}::date and e.day <= ${d(lateTo)}::date
             and e.received_at >= ${fromHour.toISOString()}::timestamptz and e.received_at < v.hour + ${lateHours} * interval '1 hour'
        ) e
      window w as (partition by e.view_id order by e.seq)
    ),
    ev2 as (
      -- Without the player's clock (SPEC §18 leaves elapsed_ms/watch_ms optional): the time
      -- between two events is the receipt times' difference plus a slack for the sender's batching
      -- (null when the player's clock gives it), and the playhead's advance between consecutive
      -- events is time watched — never across a seek (an interval that ends in \`seeked\`), never
      -- after the view ended, never more than the time that passed. Two events of one request
      -- (one receipt time: a sender that batches, or sends a whole view at its end) carry no
      -- timing the server could check: their advance counts as reported (\`batched\`), as a
      -- player's own watch_ms does (issue 49: a 20 s view sent in one request counted 10 s).
      select ev.*, ev.next_received = ev.received_at and (ev.elapsed_ms is null or ev.next_elapsed is null) as batched,
             case when ev.elapsed_ms is null or ev.next_elapsed is null
                  then extract(epoch from ev.next_received - ev.received_at)::float8 * 1000 end as wall_gap_ms,
             case when ev.next_event is not null and ev.next_event <> 'seeked' and ev.event not in ('viewend', 'ended')
                  then greatest(0::float8, least((ev.next_position - ev.position)::float8 * 1000,
                       case when ev.elapsed_ms is not null and ev.next_elapsed is not null then (ev.next_elapsed - ev.elapsed_ms)::float8
                            when ev.next_received = ev.received_at then 'infinity'::float8
                            else extract(epoch from ev.next_received - ev.received_at)::float8 * 1000 + ${raw(String(GAP_SLACK_MS))} end)) end as played_ms,
             substring(ev.rendition from '^([0-9]{2,4})p')::int as rendition_height
        from ev
    ),
    ev3 as (
      -- Time played from this event to the next: the player's count when it sent one, else the
      -- playhead's advance. What time-weighted bitrate and scaling are weighted by.
      select ev2.*, greatest(coalesce((ev2.next_watch - ev2.watch_ms)::float8, ev2.played_ms, 0), 0) as play_ms
        from ev2
    ),
    m as (
      -- One row per view, with the view's own columns (its start's) carried through \`ev\`: no
      -- join back to \`v\` by view_id. Such a join, planned on the current hour's estimates (a
      -- fresh partition's statistics say "1 row"), became a nested loop that re-ran this whole
      -- aggregate once per view: 5,000 views of 60 events ran for 28+ minutes (issue 45).
      select ev.view_id, ev.subject_id, ev.workspace_id, ev.hour, ev.day, ev.viewer_hash, ev.browser, ev.os, ev.device,
             -- The player's own count when it sent one; else the playhead's advance: between requests
             -- bounded by the view's span on the server's clock (plus one heartbeat's slack) or the
             -- player's, within a request as reported.
             coalesce(max(ev.watch_ms), (least(coalesce(sum(ev.played_ms) filter (where not ev.batched), 0),
               greatest(extract(epoch from max(ev.received_at) - min(ev.received_at))::float8 * 1000 + ${raw(String(VIEW_SLACK_MS))},
                        (max(ev.elapsed_ms) - min(ev.elapsed_ms))::float8)) + coalesce(sum(ev.played_ms) filter (where ev.batched), 0))::bigint, 0) as watch_ms,
             bool_or(ev.event = 'playing') as started,
             -- Play intent → first frame: on the player's clock, else by the events' order on the
             -- server's (unknown, not zero, when both arrived in one batch).
             coalesce(min(ev.elapsed_ms) filter (where ev.event = 'playing') - coalesce(min(ev.elapsed_ms) filter (where ev.event = 'viewstart'), 0),
                      nullif(round(extract(epoch from min(ev.received_at) filter (where ev.event = 'playing')
                                                   - min(ev.received_at) filter (where ev.event = 'viewstart')) * 1000), 0)::int) as startup_ms,
             count(*) filter (where ev.event = 'rebufferstart') as rebuffers,
             coalesce(sum(greatest(coalesce(ev.next_elapsed - ev.elapsed_ms, ev.wall_gap_ms, 0), 0)) filter (where ev.event = 'rebufferstart'), 0)::bigint as rebuffer_ms,
             bool_or(ev.event = 'error') as errored,
             bool_or(ev.event in ('viewend', 'ended')) as ended,
             avg(ev.bitrate) filter (where ev.bitrate > 0) as bitrate,
             max(ev.position) as furthest,
             mode() within group (order by ev.rendition) filter (where ev.rendition is not null) as rendition,
             max(ev.country) as country,
             coalesce(sum(ev.play_ms * ev.bitrate) filter (where ev.bitrate > 0), 0) as bitrate_ms_sum,
             coalesce(sum(ev.play_ms) filter (where ev.bitrate > 0), 0) as bitrate_ms,
             coalesce(sum(ev.play_ms * greatest(ev.player_height::float8 / ev.rendition_height - 1, 0)) filter (where ev.rendition_height > 0 and ev.player_height > 0), 0) as upscale_ms_sum,
             coalesce(sum(ev.play_ms * greatest(1 - ev.player_height::float8 / ev.rendition_height, 0)) filter (where ev.rendition_height > 0 and ev.player_height > 0), 0) as downscale_ms_sum,
             coalesce(sum(ev.play_ms) filter (where ev.rendition_height > 0 and ev.player_height > 0), 0) as scale_ms,
             coalesce(sum(ev.play_ms) filter (where ev.rendition_height > 0 and ev.player_height > ev.rendition_height), 0) as upscaled_ms,
             coalesce(sum(ev.play_ms) filter (where ev.rendition_height > 0 and ev.player_height > 0 and ev.player_height < ev.rendition_height), 0) as downscaled_ms
        from ev3 ev group by ev.view_id, ev.subject_id, ev.workspace_id, ev.hour, ev.day, ev.viewer_hash, ev.browser, ev.os, ev.device
    ),
    m2 as (
      -- The viewer experience score of a view (docs/analytics.md): a failure scores 0; a view that
      -- never reached a first frame without an error (an exit before start) has none; else the
      -- mean of a startup, a smoothness and a video-quality score, each 0–1.
      select m.*,
             case when m.errored then 0::float8
                  when not m.started then null
                  else 100 * (
                    exp(-greatest(coalesce(m.startup_ms, 0) - ${raw(String(SCORE.startupFreeMs))}, 0)::float8 / ${raw(String(SCORE.startupScaleMs))})
                    + (1 / sqrt(1 + power(m.rebuffers / 2.0, 2))
                       + exp(-10 * case when m.watch_ms + m.rebuffer_ms > 0 then m.rebuffer_ms::float8 / (m.watch_ms + m.rebuffer_ms) else 0 end)) / 2
                    + exp(-0.33 * case when m.scale_ms > 0 then m.upscale_ms_sum / m.scale_ms else 0 end)
                  ) / 3 end as score
        from m
    ),
    pv0 as (
      select m2.*, false as is_ws, m2.subject_id as own_id from m2
      ${copies}
    ),
    pv as (
      select p.view_id, p.own_id as subject_id, p.is_ws, p.workspace_id, p.hour, p.day, p.viewer_hash, p.browser, p.os, p.device,
             p.watch_ms, p.started, greatest(p.startup_ms, 0) as startup_ms, p.rebuffers, p.rebuffer_ms, p.errored, p.score,
             p.bitrate_ms_sum, p.bitrate_ms, p.upscale_ms_sum, p.downscale_ms_sum, p.scale_ms, p.upscaled_ms, p.downscaled_ms, p.country,
             (not p.started and p.ended and not p.errored) as exited, p.bitrate, p.furthest, p.rendition,
             case when p.is_ws or p.subject_id like 'ls\\_%' then null
                  else (select duration_seconds from videos where id = cast(case when p.subject_id like 'ls\\_%' then null else p.subject_id end as uuid)) end as duration
        from pv0 p
    )`;
}

function hourlyParts(scope: Scope, from: Date): { ctes: Fragment; select: Fragment } {
  const wsFirst =
    scope.kind === 'subject' ? raw('') : raw(`union all select workspace_id, viewer_hash, min(received_at) from s0 where viewer_hash is not null group by day, workspace_id, viewer_hash`);
  return {
    ctes: sql`
    nv as (
      -- A viewer is new in the hour of their first start of the day; by the first start's time
      -- (not its hour), so a mid-hour \`from\` counts only viewers first seen since it.
      select date_trunc('hour', first_at) as hour, subject_id, count(*)::int as n from (
        select subject_id, viewer_hash, min(received_at) as first_at from s0 where viewer_hash is not null group by day, subject_id, viewer_hash
        ${wsFirst}
      ) f(subject_id, viewer_hash, first_at) where first_at >= ${from.toISOString()}::timestamptz group by 1, 2
    ),
    sh as (
      select hour, subject_id, jsonb_object_agg(b, n) as h from (
        select hour, subject_id, width_bucket(startup_ms, ${`{${STARTUP_BUCKETS_MS.join(',')}}`}::int[]) as b, count(*) as n
          from pv where started and startup_ms is not null group by 1, 2, 3
      ) x group by 1, 2
    ),
    rh as (
      select hour, subject_id, jsonb_object_agg(b, n) as h from (
        select hour, subject_id, least(${RETENTION_STEPS}, floor(${RETENTION_STEPS} * furthest / duration))::int as b, count(*) as n
          from pv where duration > 0 and furthest is not null group by 1, 2, 3
      ) x group by 1, 2
    ),
    agg as (
      select hour, subject_id, min(workspace_id) as workspace_id,
             count(*)::int as views,
             sum(watch_ms)::bigint as watch_ms,
             count(*) filter (where started)::int as started,
             coalesce(sum(startup_ms) filter (where started and startup_ms is not null), 0)::bigint as startup_ms_sum,
             sum(rebuffers)::int as rebuffers,
             sum(rebuffer_ms)::bigint as rebuffer_ms,
             count(*) filter (where errored)::int as errors,
             count(*) filter (where exited)::int as exits_before_start,
             coalesce(sum(bitrate), 0)::float8 as bitrate_sum,
             count(bitrate)::int as bitrate_views,
             count(*) filter (where errored and not started)::int as startup_failures,
             count(*) filter (where errored and started)::int as playback_failures,
             coalesce(sum(score), 0)::float8 as score_sum,
             count(score)::int as scored_views,
             sum(bitrate_ms_sum)::float8 as bitrate_ms_sum,
             sum(bitrate_ms)::bigint as bitrate_ms,
             sum(upscale_ms_sum)::float8 as upscale_ms_sum,
             sum(downscale_ms_sum)::float8 as downscale_ms_sum,
             sum(scale_ms)::bigint as scale_ms,
             sum(upscaled_ms)::bigint as upscaled_ms,
             sum(downscaled_ms)::bigint as downscaled_ms,
             bool_or(not is_ws and subject_id not like 'ls\\_%') as is_video
        from pv group by hour, subject_id
    )`,
    select: sql`
    select agg.hour, agg.subject_id, agg.workspace_id, agg.views, coalesce(nv.n, 0) as new_viewers, agg.watch_ms, agg.started, agg.startup_ms_sum,
           coalesce(sh.h, '{}'::jsonb) as startup_hist, agg.rebuffers, agg.rebuffer_ms, agg.errors, agg.exits_before_start, agg.bitrate_sum, agg.bitrate_views,
           case when agg.is_video then coalesce(rh.h, '{}'::jsonb) end as retention_hist,
           agg.startup_failures, agg.playback_failures, agg.score_sum, agg.scored_views, agg.bitrate_ms_sum, agg.bitrate_ms,
           agg.upscale_ms_sum, agg.downscale_ms_sum, agg.scale_ms, agg.upscaled_ms, agg.downscaled_ms, agg.scale_ms as scale_time_ms
      from agg
      left join nv using (hour, subject_id)
      left join sh using (hour, subject_id)
      left join rh using (hour, subject_id)`,
  };
}

/**
 * Hourly buckets (HourRow) for views that started in [from, to). `from`/`to` may fall inside an
 * hour: the rollup's current, partial hour ends at its cut and a read's raw part starts there; the
 * two rows of that hour add up to the whole hour's (counts, sums and histograms add; new viewers
 * are counted by their first start's time against the whole day's starts).
 */
export function hourlySql(scope: Scope, from: Date, to: Date, lateHours: number): Fragment {
  const h = hourlyParts(scope, from);
  return sql`with ${perView(scope, from, to, lateHours)}, ${h.ctes} ${h.select}`;
}

/** Views and watch time per browser, OS, device class and (most watched) rendition, per hour and subject. */
const BREAKDOWN_SELECT = raw(`
    select hour, subject_id, dimension, value, count(*)::int as views, sum(watch_ms)::bigint as watch_ms from (
      select hour, subject_id, 'browser' as dimension, coalesce(browser, 'Unknown') as value, watch_ms from pv
      union all select hour, subject_id, 'os', coalesce(os, 'Unknown'), watch_ms from pv
      union all select hour, subject_id, 'device', coalesce(device, 'other'), watch_ms from pv
      union all select hour, subject_id, 'rendition', rendition, watch_ms from pv where rendition is not null
      union all select hour, subject_id, 'country', coalesce(country, 'Unknown'), watch_ms from pv
    ) x group by 1, 2, 3, 4`);

export function breakdownSql(scope: Scope, from: Date, to: Date, lateHours: number): Fragment {
  return sql`with ${perView(scope, from, to, lateHours)} ${BREAKDOWN_SELECT}`;
}

/**
 * Both at once, for a read's raw part: the per-view metrics are computed once (not once per
 * statement) and the answer is one row `{hours: HourRow[], breakdowns: BreakdownRow[]}` as JSON.
 */
export function bucketsSql(scope: Scope, from: Date, to: Date, lateHours: number): Fragment {
  const h = hourlyParts(scope, from);
  return sql`with ${perView(scope, from, to, lateHours)}, ${h.ctes},
    hr as (${h.select}),
    br as (${BREAKDOWN_SELECT})
    select (select coalesce(json_agg(hr), '[]') from hr) as hours, (select coalesce(json_agg(br), '[]') from br) as breakdowns`;
}
