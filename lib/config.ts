import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { MediaLimits } from './media/limits';
import type { MediaPolicy } from './media/tools';
import type { RateControl } from './media/args';
import { parseTrustedProxies } from './net/proxies';
import type { RenderLimits } from './outputs/renderQueue';
import type { MasterKey, MasterKeys } from './protection/keys';

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
  // A production Temporal (self-hosted with mTLS, or Temporal Cloud with mTLS or an API key).
  TEMPORAL_TLS: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  TEMPORAL_TLS_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().optional(),
  TEMPORAL_TLS_CA_PATH: z.string().optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().optional(),
  TEMPORAL_API_KEY: z.string().optional(),
  TEMPORAL_TASK_QUEUE: z.string().default('video'),
  TEMPORAL_TRANSCODE_QUEUE: z.string().default('transcode'),
  TRANSCODE_CONCURRENCY: z.coerce.number().int().min(1).optional(),
  TRANSCODE_HEARTBEAT_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  WORKER_ROLES: z
    .string()
    .default('workflow,transcode')
    .transform((s) => s.split(',').map((r) => r.trim()).filter(Boolean))
    .pipe(z.array(z.enum(['workflow', 'transcode', 'live'])).min(1)),

  STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
  STORAGE_LOCAL_DIR: z.string().optional(),
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().default('vidhost'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool.default(true),

  UPLOAD_SIGNING_SECRET: z.string().min(16).optional(),
  /** Seals secrets stored for reuse (webhook signing secrets); defaults to UPLOAD_SIGNING_SECRET. */
  SECRETS_KEY: z.string().min(16).optional(),
  UPLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(1).default(3600),
  UPLOAD_GRACE_SECONDS: z.coerce.number().int().min(0).default(900),
  MAX_UPLOAD_BYTES: z.coerce.number().int().min(1).default(5 * 1024 ** 3),
  CONFIRM_WAIT_MS: z.coerce.number().int().min(0).default(20_000),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1).default(1024 * 1024),

  PLAYBACK_SIGNING_KEYS: z.string().optional(),
  PLAYBACK_SIGNING_KID: z.string().optional(),
  // SPEC §20: master keys wrapping per-video AES-128 keys, "kid:<base64 of 32 bytes>[,kid:…]" (docs/protection.md)
  PLAYBACK_KEY_MASTERS: z.string().optional(),
  PLAYBACK_KEY_MASTER_KID: z.string().optional(),

  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(100),
  // security (issue 22): who may set X-Forwarded-For, and the key that seals secrets at rest
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

  WEBHOOK_RETRY_SCHEDULE: z.string().default('5s,5m,30m,2h,5h,10h,14h,20h,24h'),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(1).default(15_000),
  ALLOW_LOOPBACK_URLS: bool.default(false),

  FFMPEG_PATH: z.string().default('ffmpeg'),
  FFPROBE_PATH: z.string().default('ffprobe'),
  X264_PRESET: z.string().default('veryfast'),
  HLS_SEGMENT_SECONDS: z.coerce.number().int().min(1).max(20).default(6),

  // media room (issue 9): hostile media — sandbox, bounds, rlimits (SPEC §12)
  MEDIA_SANDBOX: z.enum(['bwrap', 'none', 'auto']).default('auto'),
  MEDIA_MAX_WIDTH: z.coerce.number().int().min(16).default(8192),
  MEDIA_MAX_HEIGHT: z.coerce.number().int().min(16).default(8192),
  MEDIA_MAX_FPS: z.coerce.number().min(1).default(240),
  MEDIA_MAX_DURATION_SECONDS: z.coerce.number().min(1).default(12 * 3600),
  MEDIA_WALL_TIME_FACTOR: z.coerce.number().min(0.1).default(20),
  MEDIA_MIN_WALL_SECONDS: z.coerce.number().int().min(1).default(300),
  MEDIA_MAX_MEMORY_MB: z.coerce.number().int().min(64).default(8192),
  MEDIA_MAX_OUTPUT_FILE_MB: z.coerce.number().int().min(1).default(16384),
  MEDIA_CPU_PER_WALL_SECOND: z.coerce.number().min(0.1).optional(),
  /** Test-only: turns the input allow-lists off to prove the sandbox holds alone. Refused outside NODE_ENV=test. */
  MEDIA_TEST_DISABLE_FORMAT_CHECK: bool.default(false),

  // transcode room (issue 11): passthrough rendition and chunked encodes (docs/transcoding.md)
  TRANSCODE_PASSTHROUGH: bool.default(true),
  TRANSCODE_CHUNK_THRESHOLD_SECONDS: z.coerce.number().min(1).default(120),
  TRANSCODE_CHUNK_SECONDS: z.coerce.number().min(1).default(30),
  // encoding efficiency (issue 28, SPEC §21): capped CRF, quality floor (docs/transcoding.md)
  TRANSCODE_RATE_CONTROL: z.enum(['crf', 'abr']).default('crf'),
  TRANSCODE_CRF: z.coerce.number().int().min(0).max(51).default(23),
  /** SSIM (dB) under which a rendition is reported as below the quality floor. */
  QUALITY_FLOOR_SSIM_DB: z.coerce.number().min(0).max(100).default(12),
  // dashboard room: sessions and sign-in throttling
  SESSION_TTL_HOURS: z.coerce.number().min(1).default(168),
  LOGIN_MAX_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).default(5),
  LOGIN_MAX_FAILURES_PER_IP: z.coerce.number().int().min(1).default(30),
  LOGIN_MAX_FAILURES_PER_EMAIL: z.coerce.number().int().min(1).default(100),
  LOGIN_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(900),
  // uploads room (issue 10): resumable (tus) uploads
  MAX_RESUMABLE_UPLOAD_BYTES: z.coerce.number().int().min(1).default(50 * 1024 ** 3),

  // on-demand images (issue 22 item 8, docs/outputs.md "Render limits")
  RENDER_CONCURRENCY: z.coerce.number().int().min(1).default(2),
  RENDER_ANONYMOUS_CONCURRENCY: z.coerce.number().int().min(1).default(1),
  RENDER_QUEUE_MAX: z.coerce.number().int().min(0).default(4),
  RENDER_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  RENDER_BUDGET_PER_ADDRESS_PER_MINUTE: z.coerce.number().int().min(1).default(6),
  RENDER_BUDGET_PER_VIDEO_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  RENDER_FAILURE_CACHE_SECONDS: z.coerce.number().int().min(1).default(60),
  DERIVED_MAX_MB_PER_VIDEO: z.coerce.number().min(1).default(64),

  // contract room: metrics and logs (SPEC §16)
  // Metrics are served on their own ports, never the public API's (issue 22): loopback by default.
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9464),
  API_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9463),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_TOKEN: z.string().min(16).optional(),
  TEMPORAL_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9465),
  LOG_FORMAT: z.enum(['auto', 'pretty', 'json']).default('auto'),
  S3_PUBLIC_ENDPOINT: z.string().url().optional(),
  // analytics room (issue 24): viewer analytics (docs/analytics.md)
  ANALYTICS_RAW_DAYS: z.coerce.number().int().min(2).max(3650).default(30),
  ANALYTICS_FLUSH_MS: z.coerce.number().int().min(10).default(1000),
  ANALYTICS_FLUSH_ROWS: z.coerce.number().int().min(1).max(5000).default(1000),
  ANALYTICS_BUFFER_MAX_ROWS: z.coerce.number().int().min(100).default(200_000),
  ANALYTICS_ROLLUP_EVERY_SECONDS: z.coerce.number().int().min(10).default(60),
  ANALYTICS_ROLLUP_LOOKBACK_HOURS: z.coerce.number().int().min(1).max(48).default(2),

  // live room (issue 23): ingest (media server), live task queue, latency (docs/live.md)
  TEMPORAL_LIVE_QUEUE: z.string().default('vidhost-live'),
  LIVE_CONCURRENCY: z.coerce.number().int().min(1).default(4),
  LIVE_HEARTBEAT_TIMEOUT_MS: z.coerce.number().int().min(1000).default(4000),
  LIVE_INGEST_HOST: z.string().default('127.0.0.1'),
  LIVE_RTMP_PORT: z.coerce.number().int().min(0).max(65535).default(1935),
  LIVE_SRT_PORT: z.coerce.number().int().min(0).max(65535).default(8890),
  LIVE_MEDIA_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(8935),
  /** Loopback port where the media server answers the SRT gateway's stream-key checks. */
  LIVE_SRT_CHECK_PORT: z.coerce.number().int().min(0).max(65535).default(8891),
  /** Where encoders are told to send (ingest.rtmp_url/srt_url); default from PUBLIC_BASE_URL's host. */
  LIVE_PUBLIC_INGEST_HOST: z.string().optional(),
  /** How live workers reach the media server to read a feed. */
  LIVE_MEDIA_INTERNAL_URL: z.string().default('rtmp://127.0.0.1:1935'),
  /** Signs the live workers' reads from the media server (only they may play a feed). */
  LIVE_MEDIA_SECRET: z.string().min(16).optional(),
  LIVE_SEGMENT_SECONDS: z.coerce.number().min(1).max(10).default(2),
  LIVE_LOW_LATENCY_SEGMENT_SECONDS: z.coerce.number().min(0.2).max(2).default(1),
  LIVE_WINDOW_SECONDS: z.coerce.number().min(30).default(36),
  LIVE_X264_PRESET: z.string().default('veryfast'),
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
    /** Undefined for a plain-text server (the dev server, a cluster inside a private network). */
    tls?: { certPath?: string; keyPath?: string; caPath?: string; serverName?: string };
    apiKey?: string;
    taskQueue: string;
    transcodeQueue: string;
    transcodeConcurrency: number;
    heartbeatTimeoutMs: number;
    workerRoles: Array<'workflow' | 'transcode' | 'live'>;
  };
  storage: {
    driver: 'local' | 's3';
    localDir: string;
    s3: {
      endpoint?: string;
      publicEndpoint?: string; // contract room
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
    /** tus uploads may exceed the single-PUT limit up to this (SPEC §13). */
    maxResumableBytes: number;
  };
  bodyLimitBytes: number;
  /** Key material for lib/secrets.ts (SECRETS_KEY, else UPLOAD_SIGNING_SECRET). */
  secretsKey: Uint8Array;
  playback: { keys: PlaybackKey[]; signingKid: string };
  /** Master keys for encrypted HLS (SPEC §20); empty in production when not configured: `aes-128` is then refused. */
  protection: MasterKeys;
  rateLimitPerMinute: number;
  /** CIDRs of the proxies whose X-Forwarded-For is believed (lib/net/proxies.ts); empty: none. */
  trustedProxies: string[];
  hot: { redisUrl?: string; invalidKeyLimitPerMinute: number; keyCacheTtlMs: number; cdnAccessCacheMs: number; cdnFileCacheBytes: number; readCacheMs: number; apiProcesses: number };
  webhooks: { retryScheduleMs: number[]; timeoutMs: number };
  allowLoopbackUrls: boolean;
  media: {
    ffmpegPath: string;
    ffprobePath: string;
    x264Preset: string;
    segmentSeconds: number;
    sandbox: MediaPolicy['sandbox'];
    limits: MediaLimits;
    formatCheck: boolean;
    passthrough: boolean;
    chunkThresholdSeconds: number;
    chunkSeconds: number;
    rateControl: RateControl;
    qualityFloorSsimDb: number;
  };
  // dashboard room
  dashboard: { sessionTtlSeconds: number; maxFailuresPerAccount: number; maxFailuresPerIp: number; maxFailuresPerEmail: number; failureWindowSeconds: number };
  /** On-demand images (issue 22): the render queue, budgets and the derived-file cap. */
  renders: RenderLimits;
  // contract room
  /** `port`: a worker's; `apiPort`: the API's (0 = none); `token`: bearer token both require when set. */
  metrics: { port: number; apiPort: number; host: string; token?: string; temporalPort: number };
  logFormat: 'auto' | 'pretty' | 'json';
  // analytics room
  analytics: { rawDays: number; flushMs: number; flushRows: number; bufferMaxRows: number; rollupEverySeconds: number; lookbackHours: number };
  // live room
  live: {
    queue: string;
    concurrency: number;
    heartbeatTimeoutMs: number;
    ingestHost: string;
    rtmpPort: number;
    srtPort: number;
    srtCheckPort: number;
    mediaHttpPort: number;
    publicIngestHost: string;
    mediaInternalUrl: string;
    mediaSecret: string;
    segmentSeconds: number;
    lowLatencySegmentSeconds: number;
    windowSeconds: number;
    x264Preset: string;
  };
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

/** Development only: a fixed master derived from the dev secret, so a fresh checkout encrypts without setup. */
const DEV_MASTER: MasterKey = { kid: 'dev', key: createHash('sha256').update(`master:${DEV_SECRET}`).digest() };

function parseMasterKeys(text: string | undefined, kid: string | undefined, isProd: boolean): MasterKeys {
  if (!text) {
    if (kid) throw new Error('PLAYBACK_KEY_MASTER_KID is set without PLAYBACK_KEY_MASTERS');
    return isProd ? { keys: [], currentKid: '' } : { keys: [DEV_MASTER], currentKid: DEV_MASTER.kid };
  }
  const keys = text.split(',').map((pair) => {
    const i = pair.indexOf(':');
    if (i <= 0) throw new Error('PLAYBACK_KEY_MASTERS must be "kid:base64[,kid:base64]"');
    const key = Buffer.from(pair.slice(i + 1).trim(), 'base64');
    if (key.length !== 32) throw new Error(`master key ${pair.slice(0, i)} must be 32 bytes (base64)`);
    return { kid: pair.slice(0, i).trim(), key };
  });
  const currentKid = kid ?? keys[0].kid;
  if (!keys.some((k) => k.kid === currentKid)) throw new Error(`PLAYBACK_KEY_MASTER_KID ${currentKid} is not in PLAYBACK_KEY_MASTERS`);
  return { keys, currentKid };
}

/** mTLS needs a certificate and its key together; an API key implies TLS (Temporal Cloud refuses plain text). */
function temporalTls(e: z.output<typeof schema>): Config['temporal']['tls'] {
  if (!!e.TEMPORAL_TLS_CERT_PATH !== !!e.TEMPORAL_TLS_KEY_PATH) {
    throw new Error('TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH must be set together (mTLS)');
  }
  const wanted = e.TEMPORAL_TLS || !!e.TEMPORAL_TLS_CERT_PATH || !!e.TEMPORAL_API_KEY;
  if (!wanted) return undefined;
  return { certPath: e.TEMPORAL_TLS_CERT_PATH, keyPath: e.TEMPORAL_TLS_KEY_PATH, caPath: e.TEMPORAL_TLS_CA_PATH, serverName: e.TEMPORAL_TLS_SERVER_NAME };
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
  if (e.MEDIA_TEST_DISABLE_FORMAT_CHECK && e.NODE_ENV !== 'test') throw new Error('MEDIA_TEST_DISABLE_FORMAT_CHECK is only allowed with NODE_ENV=test');
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
      tls: temporalTls(e),
      apiKey: e.TEMPORAL_API_KEY,
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
        publicEndpoint: e.S3_PUBLIC_ENDPOINT, // contract room
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
      maxResumableBytes: e.MAX_RESUMABLE_UPLOAD_BYTES,
    },
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    secretsKey: new TextEncoder().encode(e.SECRETS_KEY ?? e.UPLOAD_SIGNING_SECRET ?? DEV_SECRET),
    playback: { keys, signingKid },
    protection: parseMasterKeys(e.PLAYBACK_KEY_MASTERS, e.PLAYBACK_KEY_MASTER_KID, isProd),
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
    webhooks: { retryScheduleMs: parseDurationList(e.WEBHOOK_RETRY_SCHEDULE), timeoutMs: e.WEBHOOK_TIMEOUT_MS },
    allowLoopbackUrls: e.ALLOW_LOOPBACK_URLS,
    media: {
      ffmpegPath: e.FFMPEG_PATH,
      ffprobePath: e.FFPROBE_PATH,
      x264Preset: e.X264_PRESET,
      segmentSeconds: e.HLS_SEGMENT_SECONDS,
      sandbox: e.MEDIA_SANDBOX,
      limits: {
        maxWidth: e.MEDIA_MAX_WIDTH,
        maxHeight: e.MEDIA_MAX_HEIGHT,
        maxFps: e.MEDIA_MAX_FPS,
        maxDurationSeconds: e.MEDIA_MAX_DURATION_SECONDS,
        wallTimeFactor: e.MEDIA_WALL_TIME_FACTOR,
        minWallSeconds: e.MEDIA_MIN_WALL_SECONDS,
        maxMemoryBytes: e.MEDIA_MAX_MEMORY_MB * 1024 * 1024,
        maxOutputFileBytes: e.MEDIA_MAX_OUTPUT_FILE_MB * 1024 * 1024,
        cpuPerWallSecond: e.MEDIA_CPU_PER_WALL_SECOND ?? Math.max(1, os.availableParallelism()),
      },
      formatCheck: !e.MEDIA_TEST_DISABLE_FORMAT_CHECK,

      passthrough: e.TRANSCODE_PASSTHROUGH,
      chunkThresholdSeconds: e.TRANSCODE_CHUNK_THRESHOLD_SECONDS,
      chunkSeconds: e.TRANSCODE_CHUNK_SECONDS,
      rateControl: e.TRANSCODE_RATE_CONTROL === 'abr' ? { mode: 'abr' } : { mode: 'crf', crf: e.TRANSCODE_CRF },
      qualityFloorSsimDb: e.QUALITY_FLOOR_SSIM_DB,
    },
    // dashboard room
    dashboard: {
      sessionTtlSeconds: Math.round(e.SESSION_TTL_HOURS * 3600),
      maxFailuresPerAccount: e.LOGIN_MAX_FAILURES_PER_ACCOUNT,
      maxFailuresPerIp: e.LOGIN_MAX_FAILURES_PER_IP,
      maxFailuresPerEmail: e.LOGIN_MAX_FAILURES_PER_EMAIL,
      failureWindowSeconds: e.LOGIN_FAILURE_WINDOW_SECONDS,
    },
    // contract room
    renders: {
      concurrency: e.RENDER_CONCURRENCY,
      anonymousConcurrency: Math.min(e.RENDER_ANONYMOUS_CONCURRENCY, e.RENDER_CONCURRENCY),
      queueMax: e.RENDER_QUEUE_MAX,
      timeoutMs: e.RENDER_TIMEOUT_MS,
      perAddressPerMinute: e.RENDER_BUDGET_PER_ADDRESS_PER_MINUTE,
      perVideoPerMinute: e.RENDER_BUDGET_PER_VIDEO_PER_MINUTE,
      failureCacheMs: e.RENDER_FAILURE_CACHE_SECONDS * 1000,
      derivedMaxBytesPerVideo: Math.floor(e.DERIVED_MAX_MB_PER_VIDEO * 1024 * 1024),
    },
    metrics: { port: e.METRICS_PORT, apiPort: e.API_METRICS_PORT, host: e.METRICS_HOST, token: e.METRICS_TOKEN, temporalPort: e.TEMPORAL_METRICS_PORT },
    logFormat: e.LOG_FORMAT,
    // analytics room
    analytics: {
      rawDays: e.ANALYTICS_RAW_DAYS,
      flushMs: e.ANALYTICS_FLUSH_MS,
      flushRows: e.ANALYTICS_FLUSH_ROWS,
      bufferMaxRows: e.ANALYTICS_BUFFER_MAX_ROWS,
      rollupEverySeconds: e.ANALYTICS_ROLLUP_EVERY_SECONDS,
      lookbackHours: e.ANALYTICS_ROLLUP_LOOKBACK_HOURS,
    },
    // live room
    live: {
      queue: e.TEMPORAL_LIVE_QUEUE,
      concurrency: e.LIVE_CONCURRENCY,
      heartbeatTimeoutMs: e.LIVE_HEARTBEAT_TIMEOUT_MS,
      ingestHost: e.LIVE_INGEST_HOST,
      rtmpPort: e.LIVE_RTMP_PORT,
      srtPort: e.LIVE_SRT_PORT,
      srtCheckPort: e.LIVE_SRT_CHECK_PORT,
      mediaHttpPort: e.LIVE_MEDIA_HTTP_PORT,
      publicIngestHost: e.LIVE_PUBLIC_INGEST_HOST ?? new URL(base).hostname,
      mediaInternalUrl: e.LIVE_MEDIA_INTERNAL_URL.replace(/\/+$/, ''),
      // Defaults to the upload signing secret (required in production), so one secret less to provision.
      mediaSecret: e.LIVE_MEDIA_SECRET ?? e.UPLOAD_SIGNING_SECRET ?? DEV_SECRET,
      segmentSeconds: e.LIVE_SEGMENT_SECONDS,
      lowLatencySegmentSeconds: e.LIVE_LOW_LATENCY_SEGMENT_SECONDS,
      windowSeconds: e.LIVE_WINDOW_SECONDS,
      x264Preset: e.LIVE_X264_PRESET,
    },
  });
}
