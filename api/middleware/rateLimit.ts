import type { Middleware } from 'koa';
import type { Db } from '../../lib/db';
import { rateLimited } from '../errors';

/**
 * Fixed one-minute windows counted in Postgres, so every API process shares one budget per key.
 * One upsert per request; old windows are swept now and then.
 */
export function rateLimit(db: Db, limit: number): Middleware {
  return async (ctx, next) => {
    const auth = ctx.state.auth;
    if (!auth) return next();
    const now = Date.now();
    const windowStart = Math.floor(now / 60_000) * 60_000;
    const reset = Math.ceil((windowStart + 60_000) / 1000);
    const { rows } = await db.raw(
      `insert into rate_limits (key_id, window_start, count) values (?, to_timestamp(? / 1000.0), 1)
       on conflict (key_id, window_start) do update set count = rate_limits.count + 1
       returning count`,
      [auth.keyId, windowStart],
    );
    const count: number = rows[0].count;
    ctx.set('X-RateLimit-Limit', String(limit));
    ctx.set('X-RateLimit-Remaining', String(Math.max(0, limit - count)));
    ctx.set('X-RateLimit-Reset', String(reset));
    if (Math.random() < 0.01) {
      void db('rate_limits').where('window_start', '<', new Date(windowStart - 120_000)).delete().catch(() => undefined);
    }
    if (count > limit) throw rateLimited(Math.max(1, reset - Math.floor(now / 1000)));
    return next();
  };
}
