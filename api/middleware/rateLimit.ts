import type { Middleware } from 'koa';
import type { Limiter } from '../../lib/limits';
import { rateLimited } from '../errors';

/**
 * The per-key budget (RATE_LIMIT_PER_MINUTE), shared by every API process: Redis when
 * REDIS_URL is set, else blocks of tokens leased from Postgres (lib/limits).
 */
export function rateLimit(limiter: Limiter): Middleware {
  return async (ctx, next) => {
    const auth = ctx.state.auth;
    if (!auth) return next();
    const d = await limiter.consume(auth.keyId);
    const reset = Math.ceil(d.resetAt / 1000);
    ctx.set('X-RateLimit-Limit', String(d.limit));
    ctx.set('X-RateLimit-Remaining', String(d.remaining));
    ctx.set('X-RateLimit-Reset', String(reset));
    if (!d.allowed) throw rateLimited(Math.max(1, reset - Math.floor(Date.now() / 1000)));
    return next();
  };
}
