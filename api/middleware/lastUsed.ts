import type { Middleware } from 'koa';
import type { Db } from '../../lib/db';

const EVERY_MS = 60_000;

/** Notes that a key was used; `warn` hears a failed write. Never waits. */
export type TouchLastUsed = (keyId: string, warn: (err: unknown) => void) => void;

/**
 * Keeps `api_keys.last_used_at` true to the minute at the cost of one small UPDATE per key per
 * minute per process: the write is remembered here and skipped until a minute has passed, and it
 * never delays the request. One per process, shared by the Koa chain and the reads answered
 * before it (api/videos/fast.ts).
 */
export function lastUsedWriter(db: Db): TouchLastUsed {
  const written = new Map<string, number>();
  return (keyId, warn) => {
    const now = Date.now();
    if (!keyId.startsWith('key_') || now - (written.get(keyId) ?? 0) < EVERY_MS) return;
    written.set(keyId, now);
    if (written.size > 10_000) written.clear();
    void db('api_keys')
      .where({ id: keyId })
      .where((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', new Date(now - EVERY_MS)))
      .update({ last_used_at: new Date(now) })
      .catch(warn);
  };
}

export function touchLastUsed(touch: TouchLastUsed): Middleware {
  return async (ctx, next) => {
    const keyId = ctx.state.auth?.keyId;
    if (keyId) touch(keyId, (err) => ctx.state.log?.warn({ err }, 'last_used_at update failed'));
    return next();
  };
}
