import type { Db } from '../db';
import { breakdownSql, HOUR_COLUMNS, hourlySql } from './aggregate';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
export const floorHour = (t: number): number => Math.floor(t / HOUR) * HOUR;

export interface RollupOptions {
  rawDays: number;
  lookbackHours: number;
  /**
   * How far behind its start a run cuts the current hour (default 0): beacons wait in an API
   * process's buffer before they are written, so starts received just before the run may not be
   * in the table yet. The activity uses twice the flush interval plus 5 s.
   */
  settleMs?: number;
}

/** Events of a view count if they arrive before its start hour + this (see aggregate.ts). */
export const lateHoursOf = (o: RollupOptions): number => o.lookbackHours + 1;

const SUMMED = HOUR_COLUMNS.split(',').map((c) => c.trim()).filter((c) => !['hour', 'subject_id', 'workspace_id', 'startup_hist', 'retention_hist'].includes(c));
/** analytics_hourly's columns summed per UTC day: what analytics_daily holds (histograms added bucket by bucket). */
const DAILY_SELECT = `select date_trunc('day', hour at time zone 'UTC') at time zone 'UTC' as hour, subject_id, min(workspace_id) as workspace_id,
    ${SUMMED.map((c) => `sum(${c}) as ${c}`).join(', ')},
    analytics_hist_sum(startup_hist) as startup_hist,
    case when bool_or(retention_hist is not null) then analytics_hist_sum(retention_hist) end as retention_hist
  from analytics_hourly`;
const DAILY_COLUMNS = ['hour', 'subject_id', 'workspace_id', ...SUMMED, 'startup_hist', 'retention_hist'].join(', ');

/**
 * Rewrites the daily rows (and daily breakdowns) of the UTC days that [from, to) touches from
 * their hourly rows: a read over days takes whole days from them (lib/analytics/read.ts).
 */
export async function rollupDays(db: Db, from: Date, to: Date): Promise<void> {
  const d0 = new Date(Math.floor(from.getTime() / DAY) * DAY).toISOString();
  const d1 = new Date(Math.ceil(to.getTime() / DAY) * DAY).toISOString();
  await db.raw(`delete from analytics_daily where hour >= ? and hour < ?`, [d0, d1]);
  await db.raw(`delete from analytics_daily_breakdowns where hour >= ? and hour < ?`, [d0, d1]);
  await db.raw(`insert into analytics_daily (${DAILY_COLUMNS}) ${DAILY_SELECT} where hour >= ? and hour < ? group by 1, 2`, [d0, d1]);
  await db.raw(
    `insert into analytics_daily_breakdowns (hour, subject_id, dimension, value, views, watch_ms)
     select date_trunc('day', hour at time zone 'UTC') at time zone 'UTC', subject_id, dimension, value, sum(views), sum(watch_ms)
       from analytics_hourly_breakdowns where hour >= ? and hour < ? group by 1, 2, 3, 4`,
    [d0, d1],
  );
}

/**
 * Replaces the hourly buckets of [from, to) with a fresh computation from raw events, in one
 * transaction: running it twice, or over a window a previous run covered, never double counts.
 * The days it touches are summed again into the daily rows, in the same transaction.
 */
export async function rollupWindow(db: Db, from: Date, to: Date, o: RollupOptions): Promise<{ rows: number }> {
  const late = lateHoursOf(o);
  return db.transaction(async (tx) => {
    // One window at a time: two runs (the schedule's and an operator's, or a retry beside a
    // stuck attempt) each deleting then inserting the same day would collide on the daily key.
    await tx.raw(`select pg_advisory_xact_lock(hashtext('vidhost.analytics_rollup'))`);
    await tx.raw(`delete from analytics_hourly where hour >= ? and hour < ?`, [from.toISOString(), to.toISOString()]);
    await tx.raw(`delete from analytics_hourly_breakdowns where hour >= ? and hour < ?`, [from.toISOString(), to.toISOString()]);
    const h = hourlySql({ kind: 'all' }, from, to, late);
    const res = await tx.raw(
      `insert into analytics_hourly (${HOUR_COLUMNS}) ${h.sql}`,
      h.bindings,
    );
    const b = breakdownSql({ kind: 'all' }, from, to, late);
    await tx.raw(`insert into analytics_hourly_breakdowns (hour, subject_id, dimension, value, views, watch_ms) ${b.sql}`, b.bindings);
    await rollupDays(tx, from, to);
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

export interface RollupState {
  finalBefore: Date;
  lastRunAt: Date;
  /** The buckets hold every view that started before this (null: a run from before partial hours). */
  partialBefore: Date | null;
}

/** Up to which hour the rollup is final, when its last run was, and its cut (null before the first run). */
export async function readRollupState(db: Db): Promise<RollupState | null> {
  const { rows } = await db.raw(`select final_before, last_run_at, partial_before from analytics_rollup_state`);
  const r = rows[0];
  return r ? { finalBefore: new Date(r.final_before), lastRunAt: new Date(r.last_run_at), partialBefore: r.partial_before ? new Date(r.partial_before) : null } : null;
}

/** Records a run: hours before `finalBefore` are final, views started before `partialBefore` are in the buckets. */
export async function writeRollupState(db: Db, finalBefore: Date, lastRunAt: Date, partialBefore: Date): Promise<void> {
  await db.raw(
    `insert into analytics_rollup_state (id, final_before, last_run_at, partial_before) values (true, ?, ?, ?)
     on conflict (id) do update set final_before = excluded.final_before, last_run_at = excluded.last_run_at, partial_before = excluded.partial_before`,
    [finalBefore.toISOString(), lastRunAt.toISOString(), partialBefore.toISOString()],
  );
}

export async function readFinalBefore(db: Db): Promise<Date | null> {
  return (await readRollupState(db))?.finalBefore ?? null;
}

/**
 * One rollup run at `now`: recomputes every hour from where the last run left its buckets
 * non-final (or `rawDays` back on the first run, or after a long outage) up to the cut
 * `now − settleMs` — the current hour too, partially: its buckets hold the views that started
 * before the cut — a few hours at a time (`progress` is called between chunks: the activity's
 * heartbeat), then records that hours before `floor(now) − lookback` are final and the cut.
 */
export async function runRollup(db: Db, o: RollupOptions, now = Date.now(), progress: (info: unknown) => void = () => undefined) {
  const maintenance = await maintainStorage(db, o.rawDays);
  const nowHour = floorHour(now);
  const oldest = floorHour(now - (o.rawDays - 1) * 24 * HOUR);
  const previous = await readFinalBefore(db);
  const start = Math.max(oldest, Math.min(previous ? previous.getTime() : oldest, nowHour - o.lookbackHours * HOUR));
  const end = now - (o.settleMs ?? 0);
  const CHUNK = 6 * HOUR;
  let rows = 0;
  for (let t = start; t < end; t += CHUNK) {
    const r = await rollupWindow(db, new Date(t), new Date(Math.min(end, t + CHUNK)), o);
    rows += r.rows;
    progress({ hour: new Date(t).toISOString(), rows });
  }
  const finalBefore = new Date(nowHour - o.lookbackHours * HOUR);
  await writeRollupState(db, finalBefore, new Date(now), new Date(end));
  return { from: new Date(start).toISOString(), to: new Date(end).toISOString(), rows, finalBefore: finalBefore.toISOString(), dropped: maintenance.dropped };
}
