import type { Redis } from 'ioredis';
import type { Db } from '../db';
import { LeaseLimiter } from './lease';
import { connectRedis, RedisLimiter } from './redis';
import type { Limiter } from './types';

export type { Decision, Limiter } from './types';

/** Redis when REDIS_URL is set, else leases on Postgres; both shared by every API process. */
export function createLimiters(db: Db, opts: { redisUrl?: string; perKey: number; badKeysPerIp: number; beaconsPerIp: number }): {
  perKey: Limiter;
  badKeys: Limiter;
  beacons: Limiter;
  close(): Promise<void>;
} {
  let redis: Redis | undefined;
  if (opts.redisUrl) redis = connectRedis(opts.redisUrl);
  const make = (limit: number, prefix: string): Limiter => (redis ? new RedisLimiter(redis, limit, prefix) : new LeaseLimiter(db, limit, prefix));
  return {
    // Key ids keep the rows of the Postgres store as they were (key_id = the key's id).
    perKey: make(opts.perKey, ''),
    badKeys: make(opts.badKeysPerIp, 'badkey:'),
    // Analytics beacons per client address (SPEC §18): one address cannot flood the raw table.
    beacons: make(opts.beaconsPerIp, 'beacon:'),
    async close() {
      await redis?.quit().catch(() => undefined);
    },
  };
}
