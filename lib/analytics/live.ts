import type { Db } from '../db';

/**
 * A viewer of a live stream is concurrent while their view sent an event in the last this many
 * seconds and has not ended: the players send a heartbeat every 10 s (batched for 1 s, flushed
 * by the API within `ANALYTICS_FLUSH_MS`), so 30 s tolerates two lost heartbeats.
 */
export const CONCURRENT_WINDOW_SECONDS = 30;

/**
 * Distinct views of a live stream with an event in the last CONCURRENT_WINDOW_SECONDS that have
 * not ended. Reads only those seconds of raw events through the partial index on live subjects
 * (migrations/20261126020000_analytics_live_index.ts).
 */
export async function concurrentViewers(db: Db, liveStreamId: string, now = Date.now()): Promise<number> {
  const since = new Date(now - CONCURRENT_WINDOW_SECONDS * 1000);
  const { rows } = await db.raw(
    `select count(*)::int as n from (
       select view_id from analytics_events
        where subject_id = ? and subject_id like 'ls\\_%' and day >= ?::date and received_at >= ?
        group by view_id
       having not bool_or(event in ('viewend', 'ended'))
     ) v`,
    [liveStreamId, since.toISOString().slice(0, 10), since.toISOString()],
  );
  return rows[0].n;
}

/** The concurrent series covers at most this much of a range (per minute: 1,440 points). */
export const CONCURRENT_SERIES_MAX_MS = 24 * 3600_000;

export interface LiveFigures {
  concurrent_series: Array<{ t: string; concurrent_viewers: number }>;
  peak_concurrent_viewers: number;
  latency_p50_seconds: number | null;
  latency_p95_seconds: number | null;
}

/**
 * A live stream's viewers per minute over [from, to) (its last 24 hours at most; minutes without
 * a viewer are 0): the distinct views with any event received in the minute — a playing viewer
 * sends a heartbeat every 10 s, so every minute they watch has one. And the latency the players
 * reported (one sample per beacon, so about one per 10 s of viewing: a time-weighted median and
 * p95). Reads the stream's raw events through the partial index on live subjects.
 */
export async function liveFigures(db: Db, liveStreamId: string, from: Date, to: Date, now = Date.now()): Promise<LiveFigures> {
  const end = Math.min(to.getTime(), Math.ceil(now / 60_000) * 60_000);
  const start = Math.max(from.getTime(), end - CONCURRENT_SERIES_MAX_MS);
  const range = [liveStreamId, new Date(start).toISOString().slice(0, 10), new Date(start).toISOString(), new Date(end).toISOString()];
  const where = `subject_id = ? and subject_id like 'ls\\_%' and day >= ?::date and received_at >= ? and received_at < ?`;
  const [series, latency] = await Promise.all([
    db.raw(`select date_trunc('minute', received_at) as t, count(distinct view_id)::int as n from analytics_events where ${where} group by 1`, range),
    db.raw(
      `select percentile_cont(0.5) within group (order by latency_ms) as p50, percentile_cont(0.95) within group (order by latency_ms) as p95
         from analytics_events where ${where} and latency_ms is not null`,
      [liveStreamId, new Date(from.getTime()).toISOString().slice(0, 10), from.toISOString(), to.toISOString()],
    ),
  ]);
  const by = new Map<number, number>((series.rows as Array<{ t: Date; n: number }>).map((r) => [new Date(r.t).getTime(), r.n]));
  const points: LiveFigures['concurrent_series'] = [];
  for (let t = Math.floor(start / 60_000) * 60_000; t < end; t += 60_000) points.push({ t: new Date(t).toISOString(), concurrent_viewers: by.get(t) ?? 0 });
  const sec = (v: unknown) => (v === null || v === undefined ? null : Math.round(Number(v)) / 1000);
  return {
    concurrent_series: points,
    peak_concurrent_viewers: points.reduce((m, p) => Math.max(m, p.concurrent_viewers), 0),
    latency_p50_seconds: sec(latency.rows[0]?.p50),
    latency_p95_seconds: sec(latency.rows[0]?.p95),
  };
}
