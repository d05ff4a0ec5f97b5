import type { Middleware } from 'koa';
import type { Db } from '../../lib/db';

const EVERY_MS = 60_000;

/**
 * Keeps `api_keys.last_used_at` true to the minute at the cost of one small UPDATE per key per
 * minute per process: the write is remembered here and skipped until a minute has passed, and it
 * never delays the request.
 */
export function touchLastUsed(db: Db): Middleware {
  const written = new Map<string, number>();
  return async (ctx, next) => {
    const keyId = ctx.state.auth?.keyId;
    const now = Date.now();
    if (keyId?.startsWith('key_') && now - (written.get(keyId) ?? 0) >= EVERY_MS) {
      written.set(keyId, now);
      if (written.size > 10_000) written.clear();
      void db('api_keys')
        .where({ id: keyId })
        .where((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', new Date(now - EVERY_MS)))
        .update({ last_used_at: new Date(now) })
        .catch((err: unknown) => ctx.state.log?.warn({ err }, 'last_used_at update failed'));
    }
    return next();
  };
}
