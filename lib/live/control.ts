// Drop control (SPEC §17, §22): complete, disable, a key reset, a delete and the workflow's own
// ends close the encoder publishing to a stream, whatever protocol it arrived by. The live edge is
// the only ingest: it is asked directly (an authenticated `DELETE /streams/{ls}/publisher` on its
// internal API, lib/live/edge.ts); it ends the publisher and reports the disconnect, with this
// reason, through the hooks (lib/live/ingest.ts).
import type { Config } from '../config';
import { EdgeUnreachable, edgeRequest } from './edge';

/**
 * Tells the edge to close the encoder publishing to this stream, if any. True when one was
 * dropped; false when the edge has none (or did not answer: then it has no encoder it can keep
 * either way once it is back — publishers do not survive an edge restart).
 */
export async function dropEncoder(config: Config, liveStreamId: string, reason: string): Promise<boolean> {
  try {
    const a = await edgeRequest(config, 'DELETE', `/streams/${encodeURIComponent(liveStreamId)}/publisher?reason=${encodeURIComponent(reason.slice(0, 200))}`, { timeoutMs: 5000 });
    return a.status === 200;
  } catch (err) {
    if (err instanceof EdgeUnreachable) return false;
    throw err;
  }
}
