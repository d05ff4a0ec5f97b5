import type { Db } from '../db';
import { bucketsSql, type BreakdownRow, type HourRow, type Scope } from './aggregate';
import { addHist, type Granularity } from './math';
import { floorHour, lateHoursOf, type RollupOptions } from './rollup';

export interface Window {
  from: Date;
  to: Date;
}

/** Hours [from, to) rounded out to whole hours: buckets are hourly. */
export function hourAligned(w: Window): Window {
  return { from: new Date(floorHour(w.from.getTime())), to: new Date(Math.ceil(w.to.getTime() / 3600_000) * 3600_000) };
}

/** A breakdown summed over the range: what a read answers per dimension and value. */
export type BreakdownSum = Pick<BreakdownRow, 'dimension' | 'value' | 'views' | 'watch_ms'>;

export interface Buckets {
  /** The scope's own hourly rows (a video's, a live stream's or the whole workspace's), without their retention histograms. */
  hours: Array<Omit<HourRow, 'retention_hist'>>;
  /** The range's retention histogram (furthest position per 1 % of the duration), summed over its hours. */
  retention: Record<string, number>;
  breakdowns: BreakdownSum[];
  /** Workspace scope: views and watch time per video subject, for the top list. */
  perSubject: Map<string, { views: number; watch_ms: number }>;
  /** The rollup's cut the answer is as of (null: computed from raw events, the rollup never ran). */
  asOf: Date | null;
  /** With `videoOf`: the subject as a video of that workspace (null: none, or deleted), in the same round trip. */
  video?: { duration_seconds: number | null } | null;
}

/** The columns a read takes from analytics_hourly (not the retention histogram: summed in SQL). */
const READ_COLUMNS = `hour, views, new_viewers, watch_ms, started, startup_ms_sum, startup_hist, rebuffers, rebuffer_ms, errors, exits_before_start,
  bitrate_sum, bitrate_views, startup_failures, playback_failures, score_sum, scored_views, bitrate_ms_sum, bitrate_ms, upscale_ms_sum, downscale_ms_sum, scale_ms,
  upscaled_ms, downscaled_ms, scale_time_ms`;

const DAY = 86400_000;

/**
 * The rows of [from, to) from one kind of rollup table: whole UTC days inside the range from the
 * daily table (`…_daily…`), the hours of its partial days at the edges from the hourly one — or
 * every hour from the hourly table (`days` false: an hourly series needs them all).
 */
function rowsOf(kind: 'hourly' | 'hourly_breakdowns', columns: string, where: string, days: boolean): string {
  const hourly = (a: string, b: string) => `select ${columns} from analytics_${kind} where ${where} and hour >= ${a} and hour < ${b}`;
  if (!days) return hourly(':from', ':to');
  // Three index ranges (not one range with the days filtered out, which would walk every hour).
  const daily = kind === 'hourly' ? 'analytics_daily' : 'analytics_daily_breakdowns';
  return `${hourly(':from', ':d0')} union all ${hourly(':d1', ':to')} union all select ${columns} from ${daily} where ${where} and hour >= :d0 and hour < :d1`;
}

/**
 * Hourly buckets, retention and breakdowns of a scope over [from, to), from the rollup's rows
 * only — one round trip of indexed lookups on small rows, whatever the raw table holds: whole
 * days from the daily rows, the range's partial days (and an hourly series) from the hourly ones;
 * the breakdowns and the retention histogram summed over the range by Postgres. The answer is as
 * of the rollup's last run: every view that started before its cut (`partial_before`; the current
 * hour's and day's rows are partial), with each view's events up to that run — data at most one
 * schedule interval plus the run's length and the settle margin old (docs/analytics.md, "Reads
 * and freshness"). Before the rollup's first run (no state), everything comes from raw events.
 */
export async function readBuckets(
  db: Db,
  scope: Exclude<Scope, { kind: 'all' }>,
  w: Window,
  o: RollupOptions,
  granularity: Granularity = 'hour',
  videoOf?: string,
): Promise<Buckets> {
  const own = scope.kind === 'subject' ? scope.subjectId : scope.workspaceId;
  // Whole UTC days inside the range (none: d0 = d1, every hour from the hourly rows).
  let d0 = Math.ceil(w.from.getTime() / DAY) * DAY;
  let d1 = Math.floor(w.to.getTime() / DAY) * DAY;
  if (d0 >= d1) d0 = d1 = w.to.getTime();
  const series = rowsOf('hourly', READ_COLUMNS, 'subject_id = :own', granularity === 'day');
  const per =
    scope.kind === 'workspace'
      ? `(select coalesce(json_agg(p), '[]') from (select subject_id, sum(views)::int as views, sum(watch_ms)::bigint as watch_ms
            from (${rowsOf('hourly', 'subject_id, views, watch_ms', 'workspace_id = :own and subject_id <> :own', true)}) x group by subject_id) p)`
      : `'[]'::json`;
  const { rows } = await db.raw(
    `select (select partial_before from analytics_rollup_state) as cut,
            (select coalesce(json_agg(h), '[]') from (${series}) h) as hours,
            (select coalesce(jsonb_object_agg(k, n), '{}') from (
               select k, sum(n::int) as n from (${rowsOf('hourly', 'retention_hist', 'subject_id = :own and retention_hist is not null', true)}) x,
                      jsonb_each_text(x.retention_hist) r(k, n) group by k) r) as retention,
            (select coalesce(json_agg(b), '[]') from (select dimension, value, sum(views)::int as views, sum(watch_ms)::bigint as watch_ms
               from (${rowsOf('hourly_breakdowns', 'dimension, value, views, watch_ms', 'subject_id = :own', true)}) x group by dimension, value) b) as breakdowns,
            ${per} as per,
            ${videoOf ? `(select json_build_object('duration_seconds', duration_seconds) from videos where id = cast(:own as uuid) and workspace_id = :ws and deleted_at is null)` : 'null::json'} as video,
            exists (select from analytics_rollup_state) as ran`,
    { own, from: w.from.toISOString(), to: w.to.toISOString(), d0: new Date(d0).toISOString(), d1: new Date(d1).toISOString(), ...(videoOf ? { ws: videoOf } : {}) },
  );
  const r = rows[0];
  const video = videoOf ? (r.video as Buckets['video']) : undefined;
  if (videoOf && !video) return { hours: [], retention: {}, breakdowns: [], perSubject: new Map(), asOf: null, video: null };
  if (!r.ran) return { ...(await fromRaw(db, scope, w, o)), video };
  return {
    video,
    hours: r.hours,
    retention: Object.fromEntries(Object.entries(r.retention as Record<string, string | number>).map(([k, n]) => [k, Number(n)])),
    breakdowns: r.breakdowns,
    perSubject: new Map((r.per as Array<{ subject_id: string; views: number; watch_ms: number }>).map((p) => [p.subject_id, { views: p.views, watch_ms: Number(p.watch_ms) }])),
    asOf: r.cut ? new Date(r.cut) : null,
  };
}

/** Before the rollup's first run: the range computed from raw events (the rollup's own SQL). */
async function fromRaw(db: Db, scope: Exclude<Scope, { kind: 'all' }>, w: Window, o: RollupOptions): Promise<Buckets> {
  const own = scope.kind === 'subject' ? scope.subjectId : scope.workspaceId;
  const out: Buckets = { hours: [], retention: {}, breakdowns: [], perSubject: new Map(), asOf: null };
  const q = bucketsSql(scope, w.from, w.to, lateHoursOf(o));
  const { rows } = await db.raw(q.sql, q.bindings);
  for (const h of rows[0].hours as HourRow[]) {
    if (h.subject_id === own) {
      out.hours.push(h);
      addHist(out.retention, h.retention_hist);
    } else {
      const e = out.perSubject.get(h.subject_id) ?? { views: 0, watch_ms: 0 };
      e.views += h.views;
      e.watch_ms += Number(h.watch_ms);
      out.perSubject.set(h.subject_id, e);
    }
  }
  out.breakdowns = (rows[0].breakdowns as BreakdownRow[]).filter((b) => b.subject_id === own);
  return out;
}
