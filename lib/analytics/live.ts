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
