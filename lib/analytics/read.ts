import type { Db } from '../db';
import { breakdownSql, hourlySql, type BreakdownRow, type HourRow, type Scope } from './aggregate';
import { floorHour, lateHoursOf, readFinalBefore, type RollupOptions } from './rollup';

const HOUR_COLUMNS = `hour, subject_id, workspace_id, views, new_viewers, watch_ms, started, startup_ms_sum, startup_hist, rebuffers, rebuffer_ms,
  errors, exits_before_start, bitrate_sum, bitrate_views, retention_hist`;

export interface Window {
  from: Date;
  to: Date;
}

/** Hours [from, to) rounded out to whole hours: buckets are hourly. */
export function hourAligned(w: Window): Window {
  return { from: new Date(floorHour(w.from.getTime())), to: new Date(Math.ceil(w.to.getTime() / 3600_000) * 3600_000) };
}

/**
 * Hourly buckets and breakdowns of a scope over [from, to): final hours from the rollup tables,
 * the rest (at most lookback + 1 hours) computed from raw events now — which is why an event
 * shows in the API as soon as its batch is flushed (≈1 s), whatever the rollup's schedule.
 */
export async function readBuckets(
  db: Db,
  scope: Exclude<Scope, { kind: 'all' }>,
  w: Window,
  o: RollupOptions,
  fresh: 'raw' | 'rollup' = 'raw',
): Promise<{ hours: HourRow[]; breakdowns: BreakdownRow[] }> {
  const finalBefore = (await readFinalBefore(db))?.getTime() ?? -Infinity;
  // 'rollup': every hour the rollup has (non-final ones as of its last run, ≤ one interval old);
  // raw events only when it has never run.
  const cut = fresh === 'rollup' && finalBefore > -Infinity ? Infinity : finalBefore;
  const split = new Date(Math.min(w.to.getTime(), Math.max(w.from.getTime(), cut)));
  const hours: HourRow[] = [];
  const breakdowns: BreakdownRow[] = [];
  const where = scope.kind === 'subject' ? 'subject_id = ?' : 'workspace_id = ?';
  const key = scope.kind === 'subject' ? scope.subjectId : scope.workspaceId;
  if (split > w.from) {
    const [h, b] = await Promise.all([
      db.raw(`select ${HOUR_COLUMNS} from analytics_hourly where ${where} and hour >= ? and hour < ?`, [key, w.from.toISOString(), split.toISOString()]),
      db.raw(
        `select b.hour, b.subject_id, b.dimension, b.value, b.views, b.watch_ms from analytics_hourly_breakdowns b
          where ${scope.kind === 'subject' ? 'b.subject_id = ?' : 'b.subject_id = ?'} and b.hour >= ? and b.hour < ?`,
        [key, w.from.toISOString(), split.toISOString()],
      ),
    ]);
    hours.push(...h.rows);
    breakdowns.push(...b.rows);
  }
  if (w.to > split) {
    const late = lateHoursOf(o);
    const h = hourlySql(scope, split, w.to, late);
    const b = breakdownSql(scope, split, w.to, late);
    const [hr, br] = await Promise.all([db.raw(h.sql, h.bindings), db.raw(b.sql, b.bindings)]);
    hours.push(...hr.rows);
    // A workspace's breakdowns are those of its own (whole-workspace) subject.
    breakdowns.push(...(br.rows as BreakdownRow[]).filter((r) => scope.kind === 'subject' || r.subject_id === scope.workspaceId));
  }
  return { hours, breakdowns };
}
