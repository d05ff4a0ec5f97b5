import type { Db } from '../db';

/** The channel the media server listens on for "drop this encoder" (complete, disable, delete, bounds). */
export const LIVE_CONTROL_CHANNEL = 'vidhost_live';

export interface DropMessage {
  action: 'drop';
  liveStreamId: string;
  reason: string;
}

/** Tells every media server process to close the encoder publishing to this stream, if any. */
export async function dropEncoder(db: Db, liveStreamId: string, reason: string): Promise<void> {
  const msg: DropMessage = { action: 'drop', liveStreamId, reason };
  await db.raw('select pg_notify(?, ?)', [LIVE_CONTROL_CHANNEL, JSON.stringify(msg)]);
}

export function parseDrop(payload: string): DropMessage | null {
  try {
    const m = JSON.parse(payload);
    return m?.action === 'drop' && typeof m.liveStreamId === 'string' ? { action: 'drop', liveStreamId: m.liveStreamId, reason: String(m.reason ?? '') } : null;
  } catch {
    return null;
  }
}
