import type { Middleware } from 'koa';
import type { Decision, Limiter } from '../../lib/limits';
import { rateLimited } from '../errors';

/** The X-RateLimit-* headers of a decision, in the order they are sent (also by api/videos/fast.ts). */
export function rateLimitHeaders(d: Decision): Array<[string, string]> {
  return [
    ['X-RateLimit-Limit', String(d.limit)],
    ['X-RateLimit-Remaining', String(d.remaining)],
    ['X-RateLimit-Reset', String(Math.ceil(d.resetAt / 1000))],
  ];
}

/**
 * The per-key budget (RATE_LIMIT_PER_MINUTE), shared by every API process: Redis when
 * REDIS_URL is set, else blocks of tokens leased from Postgres (lib/limits).
 */
export function rateLimit(limiter: Limiter): Middleware {
  return async (ctx, next) => {
    const auth = ctx.state.auth;
    if (!auth) return next();
    const d = await limiter.consume(auth.keyId);
    for (const [name, value] of rateLimitHeaders(d)) ctx.set(name, value);
    if (!d.allowed) throw rateLimited(Math.max(1, Math.ceil(d.resetAt / 1000) - Math.floor(Date.now() / 1000)));
    return next();
  };
}
