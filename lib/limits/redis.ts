import { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Decision, Limiter } from './types';

/**
 * The budget in Redis (rate-limiter-flexible: one atomic INCR+PEXPIRE per request, no Postgres
 * write). The window opens at a key's first request and lasts `windowMs`.
 */
export class RedisLimiter implements Limiter {
  private readonly rl: RateLimiterRedis;

  constructor(
    private readonly redis: Redis,
    private readonly limit: number,
    prefix: string,
    windowMs = 60_000,
  ) {
    this.rl = new RateLimiterRedis({ storeClient: redis, keyPrefix: `vidhost:rl:${prefix}`, points: limit, duration: Math.ceil(windowMs / 1000) });
  }

  async consume(key: string): Promise<Decision> {
    try {
      const r = await this.rl.consume(key);
      return { allowed: true, limit: this.limit, remaining: r.remainingPoints, resetAt: Date.now() + r.msBeforeNext };
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      return { allowed: false, limit: this.limit, remaining: 0, resetAt: Date.now() + err.msBeforeNext };
    }
  }

  async blocked(key: string): Promise<boolean> {
    const r = await this.rl.get(key);
    return r !== null && r.consumedPoints >= this.limit;
  }

  async close(): Promise<void> {}
}

export function connectRedis(url: string): Redis {
  // Fail a command quickly rather than queue requests behind a dead Redis.
  return new Redis(url, { maxRetriesPerRequest: 1, enableAutoPipelining: true, lazyConnect: false });
}
