import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Db } from '../db';

/** A master key (32 bytes, AES-256-GCM) that wraps per-video content keys; `kid` is stored beside each wrapped key. */
export interface MasterKey {
  kid: string;
  key: Buffer;
}

export interface MasterKeys {
  keys: readonly MasterKey[];
  /** The kid new and re-wrapped content keys are wrapped with. */
  currentKid: string;
}

const AAD = (videoId: string) => Buffer.from(`vidhost-video-key:${videoId}`);

/** `iv(12) | tag(16) | ciphertext(16)`. The video's id is the associated data: a wrapped key moved to another row does not unwrap. */
export function wrapKey(master: MasterKey, videoId: string, contentKey: Buffer): Buffer {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', master.key, iv);
  c.setAAD(AAD(videoId));
  const ct = Buffer.concat([c.update(contentKey), c.final()]);
  return Buffer.concat([iv, c.getAuthTag(), ct]);
}

export function unwrapKey(master: MasterKey, videoId: string, wrapped: Buffer): Buffer {
  const d = createDecipheriv('aes-256-gcm', master.key, wrapped.subarray(0, 12));
  d.setAAD(AAD(videoId));
  d.setAuthTag(wrapped.subarray(12, 28));
  return Buffer.concat([d.update(wrapped.subarray(28)), d.final()]);
}

function masterNamed(masters: MasterKeys, kid: string): MasterKey {
  const m = masters.keys.find((k) => k.kid === kid);
  if (!m) throw new Error(`content key wrapped by master key ${kid}, which is not configured (PLAYBACK_KEY_MASTERS)`);
  return m;
}

const cache = new Map<string, Buffer>();
const MAX_CACHED = 10_000;

/** The video's content key if this process has it in memory (the CDN's fast path never waits). */
export const peekContentKey = (videoId: string): Buffer | undefined => cache.get(videoId);

/**
 * The video's AES-128 content key, made on first use: every process that races here inserts
 * `on conflict do nothing` and then reads the one row that won, so all agree. A content key never
 * changes for the life of the video (re-wrapping changes only its envelope), so unwrapped keys are
 * kept in memory.
 */
export async function videoContentKey(db: Db, masters: MasterKeys, videoId: string): Promise<Buffer> {
  const hit = cache.get(videoId);
  if (hit) return hit;
  let row: { master_kid: string; wrapped: Buffer } | undefined = await db('video_keys').where({ video_id: videoId }).first('master_kid', 'wrapped');
  if (!row) {
    const current = masterNamed(masters, masters.currentKid);
    await db('video_keys').insert({ video_id: videoId, master_kid: current.kid, wrapped: wrapKey(current, videoId, randomBytes(16)) }).onConflict('video_id').ignore();
    row = await db('video_keys').where({ video_id: videoId }).first('master_kid', 'wrapped');
    if (!row) throw new Error(`video ${videoId} has no key row`);
  }
  const key = unwrapKey(masterNamed(masters, row.master_kid), videoId, row.wrapped);
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(videoId, key);
  return key;
}

/**
 * Master key rotation: every content key wrapped by another master is unwrapped with it (it must
 * still be configured) and wrapped again with the current one. Idempotent and resumable: a row
 * is rewritten only if it still names the old kid, in batches. Returns how many were re-wrapped.
 */
export async function rewrapContentKeys(db: Db, masters: MasterKeys, batch = 500): Promise<number> {
  const current = masterNamed(masters, masters.currentKid);
  let done = 0;
  for (;;) {
    const rows: Array<{ video_id: string; master_kid: string; wrapped: Buffer }> = await db('video_keys')
      .whereNot({ master_kid: current.kid })
      .orderBy('video_id')
      .limit(batch)
      .select('video_id', 'master_kid', 'wrapped');
    if (rows.length === 0) return done;
    for (const r of rows) {
      const key = unwrapKey(masterNamed(masters, r.master_kid), r.video_id, r.wrapped);
      done += await db('video_keys')
        .where({ video_id: r.video_id, master_kid: r.master_kid })
        .update({ master_kid: current.kid, wrapped: wrapKey(current, r.video_id, key), rewrapped_at: db.fn.now() });
    }
  }
}
