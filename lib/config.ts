import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

// Env strings are parsed explicitly: Boolean('false') === true is the classic trap.
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const durations: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
/** "5s,5m,2h" → milliseconds. */
export function parseDurationList(text: string): number[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(s);
      if (!m) throw new Error(`bad duration "${s}" (use e.g. 500ms, 5s, 5m, 2h)`);
      return Math.round(Number(m[1]) * durations[m[2]]);
    });
}

const schema = z.object({
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

  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('video'),
  TEMPORAL_TRANSCODE_QUEUE: z.string().default('transcode'),
  TRANSCODE_CONCURRENCY: z.coerce.number().int().min(1).optional(),
  TRANSCODE_HEARTBEAT_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  WORKER_ROLES: z
    .string()
    .default('workflow,transcode')
    .transform((s) => s.split(',').map((r) => r.trim()).filter(Boolean))
    .pipe(z.array(z.enum(['workflow', 'transcode'])).min(1)),

  STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
  STORAGE_LOCAL_DIR: z.string().optional(),
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().default('vidhost'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool.default(true),

  UPLOAD_SIGNING_SECRET: z.string().min(16).optional(),
  UPLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(1).default(3600),
  UPLOAD_GRACE_SECONDS: z.coerce.number().int().min(0).default(900),
  MAX_UPLOAD_BYTES: z.coerce.number().int().min(1).default(5 * 1024 ** 3),
  CONFIRM_WAIT_MS: z.coerce.number().int().min(0).default(20_000),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1).default(1024 * 1024),

  PLAYBACK_SIGNING_KEYS: z.string().optional(),
  PLAYBACK_SIGNING_KID: z.string().optional(),

  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(100),

  WEBHOOK_RETRY_SCHEDULE: z.string().default('5s,5m,30m,2h,5h,10h,14h,20h,24h'),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(1).default(15_000),
  ALLOW_LOOPBACK_URLS: bool.default(false),

  FFMPEG_PATH: z.string().default('ffmpeg'),
  FFPROBE_PATH: z.string().default('ffprobe'),
  X264_PRESET: z.string().default('veryfast'),
  HLS_SEGMENT_SECONDS: z.coerce.number().int().min(1).max(20).default(6),
});

export type Env = z.input<typeof schema>;

export interface PlaybackKey {
  kid: string;
  secret: Uint8Array;
}

export interface Config {
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
  temporal: {
    address: string;
    namespace: string;
    taskQueue: string;
    transcodeQueue: string;
    transcodeConcurrency: number;
    heartbeatTimeoutMs: number;
    workerRoles: Array<'workflow' | 'transcode'>;
  };
  storage: {
    driver: 'local' | 's3';
    localDir: string;
    s3: {
      endpoint?: string;
      region: string;
      bucket: string;
      accessKeyId?: string;
      secretAccessKey?: string;
      forcePathStyle: boolean;
    };
  };
  upload: {
    signingSecret: Uint8Array;
    urlTtlSeconds: number;
    graceSeconds: number;
    maxBytes: number;
    confirmWaitMs: number;
  };
  bodyLimitBytes: number;
  playback: { keys: PlaybackKey[]; signingKid: string };
  rateLimitPerMinute: number;
  webhooks: { retryScheduleMs: number[]; timeoutMs: number };
  allowLoopbackUrls: boolean;
  media: { ffmpegPath: string; ffprobePath: string; x264Preset: string; segmentSeconds: number };
}

const DEV_SECRET = 'dev-only-insecure-secret-change-me';

function parsePlaybackKeys(text: string | undefined, isProd: boolean): PlaybackKey[] {
  if (!text) {
    if (isProd) throw new Error('PLAYBACK_SIGNING_KEYS is required in production');
    return [{ kid: 'dev', secret: new TextEncoder().encode(DEV_SECRET) }];
  }
  return text.split(',').map((pair) => {
    const i = pair.indexOf(':');
    if (i <= 0) throw new Error('PLAYBACK_SIGNING_KEYS must be "kid:secret[,kid:secret]"');
    const secret = pair.slice(i + 1).trim();
    if (secret.length < 16) throw new Error(`playback key ${pair.slice(0, i)} is shorter than 16 chars`);
    return { kid: pair.slice(0, i).trim(), secret: new TextEncoder().encode(secret) };
  });
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !(o instanceof Uint8Array)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** Reads and validates the environment once. Tests pass their own env. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const isProd = e.NODE_ENV === 'production';
  if (isProd && !e.UPLOAD_SIGNING_SECRET) throw new Error('UPLOAD_SIGNING_SECRET is required in production');
  const base = (e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, '');
  const keys = parsePlaybackKeys(e.PLAYBACK_SIGNING_KEYS, isProd);
  const signingKid = e.PLAYBACK_SIGNING_KID ?? keys[0].kid;
  if (!keys.some((k) => k.kid === signingKid)) throw new Error(`PLAYBACK_SIGNING_KID ${signingKid} is not in PLAYBACK_SIGNING_KEYS`);
  const dataDir = path.resolve(e.DATA_DIR);
  return deepFreeze({
    env: e.NODE_ENV,
    host: e.HOST,
    port: e.PORT,
    publicBaseUrl: base,
    cdnUrl: (e.PUBLIC_CDN_URL ?? `${base}/cdn`).replace(/\/+$/, ''),
    playerUrl: (e.PUBLIC_PLAYER_URL ?? `${base}/player`).replace(/\/+$/, ''),
    logLevel: e.LOG_LEVEL,
    dataDir,
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.DATABASE_POOL_MAX,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      transcodeQueue: e.TEMPORAL_TRANSCODE_QUEUE,
      transcodeConcurrency: e.TRANSCODE_CONCURRENCY ?? Math.max(1, os.availableParallelism()),
      heartbeatTimeoutMs: e.TRANSCODE_HEARTBEAT_TIMEOUT_MS,
      workerRoles: e.WORKER_ROLES,
    },
    storage: {
      driver: e.STORAGE_DRIVER,
      localDir: path.resolve(e.STORAGE_LOCAL_DIR ?? path.join(dataDir, 'storage')),
      s3: {
        endpoint: e.S3_ENDPOINT,
        region: e.S3_REGION,
        bucket: e.S3_BUCKET,
        accessKeyId: e.S3_ACCESS_KEY_ID,
        secretAccessKey: e.S3_SECRET_ACCESS_KEY,
        forcePathStyle: e.S3_FORCE_PATH_STYLE,
      },
    },
    upload: {
      signingSecret: new TextEncoder().encode(e.UPLOAD_SIGNING_SECRET ?? DEV_SECRET),
      urlTtlSeconds: e.UPLOAD_URL_TTL_SECONDS,
      graceSeconds: e.UPLOAD_GRACE_SECONDS,
      maxBytes: e.MAX_UPLOAD_BYTES,
      confirmWaitMs: e.CONFIRM_WAIT_MS,
    },
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    playback: { keys, signingKid },
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    webhooks: { retryScheduleMs: parseDurationList(e.WEBHOOK_RETRY_SCHEDULE), timeoutMs: e.WEBHOOK_TIMEOUT_MS },
    allowLoopbackUrls: e.ALLOW_LOOPBACK_URLS,
    media: {
      ffmpegPath: e.FFMPEG_PATH,
      ffprobePath: e.FFPROBE_PATH,
      x264Preset: e.X264_PRESET,
      segmentSeconds: e.HLS_SEGMENT_SECONDS,
    },
  });
}
