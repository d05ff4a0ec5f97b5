// The hot path (issue 13, issue 22): rate limits, trusted proxies, the shared limiter store, caches, processes.
import { z } from 'zod';
import { parseTrustedProxies } from '../net/proxies';
import type { EnvOf } from './env';

export const hotEnv = {
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(100),
  // security (issue 22): who may set X-Forwarded-For
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((s, ctx) => {
      try {
        return parseTrustedProxies(s);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),

  // hot (issue 13): shared limiter store, key-guessing limit, caches, processes
  REDIS_URL: z.string().url().optional(),
  INVALID_KEY_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(20),
  KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).default(60_000),
  CDN_ACCESS_CACHE_MS: z.coerce.number().int().min(0).default(2000),
  READ_CACHE_MS: z.coerce.number().int().min(0).default(2000),
  CDN_FILE_CACHE_MB: z.coerce.number().min(0).default(64),
  API_PROCESSES: z.coerce.number().int().min(1).default(1),
};

export interface HotConfig {
  rateLimitPerMinute: number;
  /** CIDRs of the proxies whose X-Forwarded-For is believed (lib/net/proxies.ts); empty: none. */
  trustedProxies: string[];
  hot: { redisUrl?: string; invalidKeyLimitPerMinute: number; keyCacheTtlMs: number; cdnAccessCacheMs: number; cdnFileCacheBytes: number; readCacheMs: number; apiProcesses: number };
}

export function hotConfig(e: EnvOf<typeof hotEnv>): HotConfig {
  return {
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    trustedProxies: e.TRUSTED_PROXIES,
    hot: {
      redisUrl: e.REDIS_URL,
      invalidKeyLimitPerMinute: e.INVALID_KEY_LIMIT_PER_MINUTE,
      keyCacheTtlMs: e.KEY_CACHE_TTL_MS,
      cdnAccessCacheMs: e.CDN_ACCESS_CACHE_MS,
      readCacheMs: e.READ_CACHE_MS,
      cdnFileCacheBytes: Math.floor(e.CDN_FILE_CACHE_MB * 1024 * 1024),
      apiProcesses: e.API_PROCESSES,
    },
  };
}
