import type { Db } from '../db';
import { parseId } from '../ids';

/**
 * A viewer of a live stream is concurrent while their view sent an event in the last this many
 * seconds and has not ended: the players send a heartbeat every 10 s (batched for 1 s, flushed
 * by the API within `ANALYTICS_FLUSH_MS`), so 30 s tolerates two lost heartbeats.
 */
export const CONCURRENT_WINDOW_SECONDS = 30;

/**
 * Which live streams beacons may count for (SPEC §18): a stream that exists, is not deleted and
 * is not private (a private stream's embed page plays nothing; a viewer with a token plays the
 * broadcast's recording video and its beacons name that token). Answers are kept `ttlMs` per
 * process, so a busy stream's beacons cost no query; at most `max` ids are kept.
 */
export class LiveSubjects {
  private readonly cache = new Map<string, { workspaceId: string | null; expiresAt: number }>();
  constructor(
    private readonly db: Db,
    private readonly ttlMs = 10_000,
    private readonly max = 10_000,
  ) {}

  async workspaceOf(subject: string, now = Date.now()): Promise<string | null> {
    const id = parseId('ls', subject);
    if (!id) return null;
    const hit = this.cache.get(id);
    if (hit && hit.expiresAt > now) return hit.workspaceId;
    const row = await this.db('live_streams').where({ id }).whereNull('deleted_at').whereNot({ visibility: 'private' }).first('workspace_id');
    if (this.cache.size >= this.max) this.cache.clear();
    const workspaceId: string | null = row?.workspace_id ?? null;
    this.cache.set(id, { workspaceId, expiresAt: now + this.ttlMs });
    return workspaceId;
  }
}

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
