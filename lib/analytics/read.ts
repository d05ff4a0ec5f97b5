import type { Db } from '../db';
import { bucketsSql, HOUR_COLUMNS, type BreakdownRow, type HourRow, type Scope } from './aggregate';
import { floorHour, lateHoursOf, readRollupState, type RollupOptions } from './rollup';


export interface Window {
  from: Date;
  to: Date;
}

/** Hours [from, to) rounded out to whole hours: buckets are hourly. */
export function hourAligned(w: Window): Window {
  return { from: new Date(floorHour(w.from.getTime())), to: new Date(Math.ceil(w.to.getTime() / 3600_000) * 3600_000) };
}

/**
 * Hourly buckets and breakdowns of a scope over [from, to). `'raw'` (a video, a live stream):
 * the views that started before the rollup's last cut come from the rollup tables (as of that
 * run; the current hour's row is partial), the views started since — about one schedule
 * interval's worth — are computed from raw events now and added as a second row of that hour, so
 * a view that starts now shows as soon as its batch is flushed (≈1 s) and a read costs about a
 * minute of one subject's raw events, however many there are in all. `'rollup'` (the workspace): every hour
 * the rollup has. Before the rollup's first run, everything comes from raw events.
 */
export interface Buckets {
  /** The scope's own hourly rows (a video's, or the whole workspace's). */
  hours: HourRow[];
  breakdowns: BreakdownRow[];
  /** Workspace scope: views and watch time per video subject, for the top list. */
  perSubject: Map<string, { views: number; watch_ms: number }>;
}

export async function readBuckets(
  db: Db,
  scope: Exclude<Scope, { kind: 'all' }>,
  w: Window,
  o: RollupOptions,
  fresh: 'raw' | 'rollup' = 'raw',
): Promise<Buckets> {
  const state = await readRollupState(db);
  // The buckets hold every view that started before the last run's cut (the current hour's
  // partially); views started since are computed from raw events. A later event of a view
  // started before the cut shows at the next run (every ANALYTICS_ROLLUP_EVERY_SECONDS). A state
  // from before partial hours: every hour from the one the last run was in is raw.
  const cut = !state
    ? -Infinity
    : fresh === 'rollup'
      ? Infinity
      : (state.partialBefore?.getTime() ?? floorHour(state.lastRunAt.getTime()));
  const split = new Date(Math.min(w.to.getTime(), Math.max(w.from.getTime(), cut)));
  const own = scope.kind === 'subject' ? scope.subjectId : scope.workspaceId;
  const out: Buckets = { hours: [], breakdowns: [], perSubject: new Map() };
  const add = (subject: string, views: number, watchMs: number) => {
    const e = out.perSubject.get(subject) ?? { views: 0, watch_ms: 0 };
    e.views += views;
    e.watch_ms += watchMs;
    out.perSubject.set(subject, e);
  };
  if (split > w.from) {
    // One round trip for the aggregates: the scope's hourly rows and breakdowns (and, for a
    // workspace, its subjects' views for the top list) as JSON.
    const range = [w.from.toISOString(), split.toISOString()];
    const per =
      scope.kind === 'workspace'
        ? `(select coalesce(json_agg(p), '[]') from (select subject_id, sum(views)::int as views, sum(watch_ms)::bigint as watch_ms from analytics_hourly
              where workspace_id = :own and subject_id <> :own and hour >= :from and hour < :split group by subject_id) p)`
        : 'json_build_array()';
    const { rows } = await db.raw(
      `select (select coalesce(json_agg(h), '[]') from (select ${HOUR_COLUMNS} from analytics_hourly where subject_id = :own and hour >= :from and hour < :split) h) as hours,
              (select coalesce(json_agg(b), '[]') from (select hour, subject_id, dimension, value, views, watch_ms from analytics_hourly_breakdowns
                 where subject_id = :own and hour >= :from and hour < :split) b) as breakdowns,
              ${per} as per`,
      { own, from: range[0], split: range[1] },
    );
    out.hours.push(...(rows[0].hours as HourRow[]));
    out.breakdowns.push(...(rows[0].breakdowns as BreakdownRow[]));
    for (const r of rows[0].per as Array<{ subject_id: string; views: number; watch_ms: number }>) add(r.subject_id, r.views, Number(r.watch_ms));
  }
  if (w.to > split) {
    // The views started since the cut: their per-view metrics computed once, hours and breakdowns in one answer.
    const q = bucketsSql(scope, split, w.to, lateHoursOf(o));
    const { rows } = await db.raw(q.sql, q.bindings);
    for (const r of rows[0].hours as HourRow[]) {
      if (r.subject_id === own) out.hours.push(r);
      else add(r.subject_id, r.views, Number(r.watch_ms));
    }
    out.breakdowns.push(...(rows[0].breakdowns as BreakdownRow[]).filter((r) => r.subject_id === own));
  }
  return out;
}
