// The analytics room (issue 24, docs/analytics.md): raw retention, ingest buffering, the rollup.
import { z } from 'zod';
import type { EnvOf } from './env';

export const analyticsEnv = {
  ANALYTICS_RAW_DAYS: z.coerce.number().int().min(2).max(3650).default(30),
  ANALYTICS_FLUSH_MS: z.coerce.number().int().min(10).default(1000),
  ANALYTICS_FLUSH_ROWS: z.coerce.number().int().min(1).max(5000).default(1000),
  ANALYTICS_BUFFER_MAX_ROWS: z.coerce.number().int().min(100).default(200_000),
  ANALYTICS_ROLLUP_EVERY_SECONDS: z.coerce.number().int().min(10).default(60),
  ANALYTICS_ROLLUP_LOOKBACK_HOURS: z.coerce.number().int().min(1).max(48).default(2),
  ANALYTICS_BEACONS_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
};

export interface AnalyticsConfig {
  rawDays: number;
  flushMs: number;
  flushRows: number;
  bufferMaxRows: number;
  rollupEverySeconds: number;
  lookbackHours: number;
  beaconsPerMinute: number;
}

export function analyticsConfig(e: EnvOf<typeof analyticsEnv>): AnalyticsConfig {
  return {
    rawDays: e.ANALYTICS_RAW_DAYS,
    flushMs: e.ANALYTICS_FLUSH_MS,
    flushRows: e.ANALYTICS_FLUSH_ROWS,
    bufferMaxRows: e.ANALYTICS_BUFFER_MAX_ROWS,
    rollupEverySeconds: e.ANALYTICS_ROLLUP_EVERY_SECONDS,
    lookbackHours: e.ANALYTICS_ROLLUP_LOOKBACK_HOURS,
    beaconsPerMinute: e.ANALYTICS_BEACONS_PER_MINUTE,
  };
}
