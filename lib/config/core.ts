// The process itself: where it listens, its public URLs, logs, Postgres, metrics (SPEC §16).
import path from 'node:path';
import { z } from 'zod';
import type { EnvOf } from './env';

export const coreEnv = {
  NODE_ENV: z.string().default('development'),
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  PUBLIC_BASE_URL: z.string().url().optional(),
  PUBLIC_CDN_URL: z.string().url().optional(),
  PUBLIC_PLAYER_URL: z.string().url().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATA_DIR: z.string().default('./data'),

  DATABASE_URL: z.string().default('postgres://postgres@127.0.0.1:5432/vidhost'),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).default(10),
  // Issue 45: every statement the API sends is bounded by Postgres itself (0: unbounded).
  API_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).default(15_000),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1).default(1024 * 1024),

  // contract room: metrics and logs (SPEC §16)
  // Metrics are served on their own ports, never the public API's (issue 22): loopback by default.
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  API_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9463),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_TOKEN: z.string().min(16).optional(),
  TEMPORAL_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9465),
  LOG_FORMAT: z.enum(['auto', 'pretty', 'json']).default('auto'),
};

export interface CoreConfig {
  env: string;
  host: string;
  port: number;
  publicBaseUrl: string;
  cdnUrl: string;
  playerUrl: string;
  logLevel: string;
  dataDir: string;
  databaseUrl: string;
  databasePoolMax: number;
  /** Postgres `statement_timeout` of the API's pool (ms; 0: none): a longer statement is cancelled by the server and answered 503 `query_timeout`. */
  apiStatementTimeoutMs: number;
  bodyLimitBytes: number;
  /** `port`: a worker's; `apiPort`: the API's (0 = none); `token`: bearer token both require when set. */
  metrics: { port: number; apiPort: number; host: string; token?: string; temporalPort: number };
  logFormat: 'auto' | 'pretty' | 'json';
}

export function coreConfig(e: EnvOf<typeof coreEnv>): CoreConfig {
  const base = (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  return {
    env: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    publicBaseUrl: base,
    cdnUrl: (e.PUBLIC_CDN_URL ?? `${base}/cdn`).replace(/\/+$/, ''),
    playerUrl: (e.PUBLIC_PLAYER_URL ?? `${base}/player`).replace(/\/+$/, ''),
    logLevel: e.LOG_LEVEL,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    apiStatementTimeoutMs: e.API_STATEMENT_TIMEOUT_MS,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    metrics: { port: e.METRICS_PORT, apiPort: e.API_METRICS_PORT, host: e.METRICS_HOST, token: e.METRICS_TOKEN, temporalPort: e.TEMPORAL_METRICS_PORT },
    logFormat: e.LOG_FORMAT,
  };
}
