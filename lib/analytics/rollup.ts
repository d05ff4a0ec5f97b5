import type { Db } from '../db';
import { breakdownSql, hourlySql } from './aggregate';

const HOUR = 3600_000;
export const floorHour = (t: number): number => Math.floor(t / HOUR) * HOUR;

export interface RollupOptions {
  rawDays: number;
  lookbackHours: number;
}

/** Events of a view count if they arrive before its start hour + this (see aggregate.ts). */
export const lateHoursOf = (o: RollupOptions): number => o.lookbackHours + 1;

/**
 * Replaces the hourly buckets of [from, to) with a fresh computation from raw events, in one
 * transaction: running it twice, or over a window a previous run covered, never double counts.
 */
export async function rollupWindow(db: Db, from: Date, to: Date, o: RollupOptions): Promise<{ rows: number }> {
  const late = lateHoursOf(o);
  return db.transaction(async (tx) => {
    await tx.raw(`delete from analytics_hourly where hour >= ? and hour < ?`, [from.toISOString(), to.toISOString()]);
    await tx.raw(`delete from analytics_hourly_breakdowns where hour >= ? and hour < ?`, [from.toISOString(), to.toISOString()]);
    const h = hourlySql({ kind: 'all' }, from, to, late);
    const res = await tx.raw(
      `insert into analytics_hourly (hour, subject_id, workspace_id, views, new_viewers, watch_ms, started, startup_ms_sum, startup_hist, rebuffers, rebuffer_ms,
                                     errors, exits_before_start, bitrate_sum, bitrate_views, retention_hist) ${h.sql}`,
      h.bindings,
    );
    const b = breakdownSql({ kind: 'all' }, from, to, late);
    await tx.raw(`insert into analytics_hourly_breakdowns (hour, subject_id, dimension, value, views, watch_ms) ${b.sql}`, b.bindings);
    return { rows: res.rowCount ?? 0 };
  });
}

/** Partitions from yesterday to a week ahead; those older than `rawDays` dropped; past days' salts deleted. */
export async function maintainStorage(db: Db, rawDays: number): Promise<{ dropped: string[] }> {
  await db.raw(`select analytics_ensure_partitions(current_date - 1, current_date + 7)`);
  const { rows } = await db.raw(
    `select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
      where p.relname = 'analytics_events' and c.relname ~ '^analytics_events_[0-9]{8}$'
        and to_date(substr(c.relname, 18), 'YYYYMMDD') < current_date - ?::int`,
    [rawDays],
  );
  const dropped: string[] = [];
  for (const r of rows as Array<{ relname: string }>) {
    await db.raw(`drop table if exists ??`, [r.relname]);
    dropped.push(r.relname);
  }
  await db.raw(`delete from analytics_events_default where day < current_date - ?::int`, [rawDays]);
  await db.raw(`delete from analytics_salts where day < current_date`);
  return { dropped };
}

/** Up to which hour the rollup is final, and when its last run ended (null before the first run). */
export async function readRollupState(db: Db): Promise<{ finalBefore: Date; lastRunAt: Date } | null> {
  const { rows } = await db.raw(`select final_before, last_run_at from analytics_rollup_state`);
  return rows[0] ? { finalBefore: new Date(rows[0].final_before), lastRunAt: new Date(rows[0].last_run_at) } : null;
}

export async function readFinalBefore(db: Db): Promise<Date | null> {
  return (await readRollupState(db))?.finalBefore ?? null;
}

/**
 * One rollup run at `now`: recomputes every hour from where the last run left its buckets
 * non-final (or `rawDays` back on the first run, or after a long outage) up to the current hour,
 * a few hours at a time (`progress` is called between chunks: the activity's heartbeat), then
 * records that hours before `floor(now) − lookback` are final.
 */
export async function runRollup(db: Db, o: RollupOptions, now = Date.now(), progress: (info: unknown) => void = () => undefined) {
  const maintenance = await maintainStorage(db, o.rawDays);
  const nowHour = floorHour(now);
  const oldest = floorHour(now - (o.rawDays - 1) * 24 * HOUR);
  const previous = await readFinalBefore(db);
  const start = Math.max(oldest, Math.min(previous ? previous.getTime() : oldest, nowHour - o.lookbackHours * HOUR));
  const end = nowHour + HOUR;
  const CHUNK = 6 * HOUR;
  let rows = 0;
  for (let t = start; t < end; t += CHUNK) {
    const r = await rollupWindow(db, new Date(t), new Date(Math.min(end, t + CHUNK)), o);
    rows += r.rows;
    progress({ hour: new Date(t).toISOString(), rows });
  }
  const finalBefore = new Date(nowHour - o.lookbackHours * HOUR);
  await db.raw(
    `insert into analytics_rollup_state (id, final_before, last_run_at) values (true, ?, ?)
     on conflict (id) do update set final_before = excluded.final_before, last_run_at = excluded.last_run_at`,
    [finalBefore.toISOString(), new Date(now).toISOString()],
  );
  return { from: new Date(start).toISOString(), to: new Date(end).toISOString(), rows, finalBefore: finalBefore.toISOString(), dropped: maintenance.dropped };
}
