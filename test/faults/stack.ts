import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb, migrateLatest, type Db } from '../../lib/db';
import { randomToken } from '../../lib/ids';
import { createApiKey, createWorkspace } from '../../lib/keys';
import { onTeardown, temporalEnv, testDatabase } from '../support/hooks';
import { spawnGroup, type Proc } from '../support/child';
import { freePort, waitForPort } from '../support/services';
import type { RestartableS3 } from './services';

export type { Proc };

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

export interface FaultStack {
  env: Record<string, string>;
  db: Db;
  databaseUrl: string;
  ws: { id: string; fullKey: string };
  apis: Array<Proc & { url: string; port: number }>;
  workers: Proc[];
  /** Another API process on its own port (same database, Temporal and storage). */
  startApi(port?: number): Promise<Proc & { url: string; port: number }>;
  /** Another worker process; `entry` lets a test run a worker with a pause point (see paused-worker.ts). */
  startWorker(opts?: { roles?: string; entry?: string; env?: Record<string, string> }): Proc;
  /** A request with the workspace's full key to API `api` (default the first). */
  call(method: string, p: string, body?: unknown, api?: number): Promise<Reply>;
  /** Every status `call` saw, with the request, for the 5xx count of the fault table. */
  seen: Array<{ status: number; request: string; retryAfter: string | null }>;
  close(): Promise<void>;
}

export interface FaultStackOptions {
  temporalAddress?: string;
  /** Admin URL of a Postgres to create this stack's database on (default: the run's test database). */
  postgresAdminUrl?: string;
  s3?: RestartableS3;
  apis?: number;
  workers?: number;
  env?: Record<string, string>;
}

/**
 * API and workers as separate processes (each can be killed), on real Temporal, Postgres and
 * storage. Short timeouts throughout so that a fault is noticed and retried within seconds.
 */
export async function startFaultStack(opts: FaultStackOptions = {}): Promise<FaultStack> {
  const temporalAddress = opts.temporalAddress ?? (await temporalEnv()).address;
  let databaseUrl: string;
  let db: Db;
  if (opts.postgresAdminUrl) {
    const name = `vidhost_faults_${randomToken(4).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
    const admin = createDb(opts.postgresAdminUrl, 1);
    await admin.raw(`create database ${name}`);
    await admin.destroy();
    const u = new URL(opts.postgresAdminUrl);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    db = createDb(databaseUrl, 5);
    await migrateLatest(db);
  } else {
    const tdb = await testDatabase();
    databaseUrl = tdb.url;
    db = createDb(databaseUrl, 5);
  }
  const port = await freePort();
  const suffix = randomToken(4).replace(/[^a-zA-Z0-9]/g, 'x');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-faults-'));
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_MAX: '5',
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: `video-${suffix}`,
    TEMPORAL_TRANSCODE_QUEUE: `transcode-${suffix}`,
    TRANSCODE_CONCURRENCY: '2',
    TRANSCODE_HEARTBEAT_TIMEOUT_MS: '3000',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    UPLOAD_SIGNING_SECRET: randomToken(24),
    PLAYBACK_SIGNING_KEYS: `k1:${randomToken(24)}`,
    WEBHOOK_RETRY_SCHEDULE: '300ms,600ms,1s,1s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s,2s',
    WEBHOOK_TIMEOUT_MS: '3000',
    ALLOW_LOOPBACK_URLS: 'true',
    CONFIRM_WAIT_MS: '0',
    RATE_LIMIT_PER_MINUTE: '100000',
    X264_PRESET: 'ultrafast',
    HLS_SEGMENT_SECONDS: '1',
  };
  if (opts.s3) {
    Object.assign(env, {
      STORAGE_DRIVER: 's3',
      S3_ENDPOINT: opts.s3.endpoint,
      S3_BUCKET: `vh-${suffix.toLowerCase()}`,
      S3_ACCESS_KEY_ID: opts.s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: opts.s3.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
    });
  }
  Object.assign(env, opts.env);

  const ws = await createWorkspace(db, `faults-${randomToken(3)}`, 'business');
  const key = await createApiKey(db, ws.id, 'full', 'faults');

  const apis: FaultStack['apis'] = [];
  const workers: Proc[] = [];
  const startApi = async (p?: number) => {
    const apiPort = p ?? (apis.length === 0 ? port : await freePort());
    const proc = spawnGroup(`api-${apiPort}`, 'api/server.ts', { ...env, PORT: String(apiPort) });
    await waitForPort(apiPort, 60_000).catch((err) => {
      throw new Error(`API did not listen: ${proc.output()}`, { cause: err });
    });
    const a = Object.assign(proc, { url: `http://127.0.0.1:${apiPort}`, port: apiPort });
    const i = apis.findIndex((x) => x.port === apiPort);
    if (i >= 0) apis[i] = a;
    else apis.push(a);
    return a;
  };
  const startWorker: FaultStack['startWorker'] = (o = {}) => {
    const w = spawnGroup(`worker-${workers.length}`, o.entry ?? 'workers/main.ts', { ...env, ...o.env, WORKER_ROLES: o.roles ?? 'workflow,transcode' });
    workers.push(w);
    return w;
  };
  const seen: FaultStack['seen'] = [];
  const call = async (method: string, p: string, body?: unknown, api = 0): Promise<Reply> => {
    const r = await fetch(`${apis[api].url}${p}`, {
      method,
      headers: { Authorization: `Bearer ${key.secret}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    seen.push({ status: r.status, request: `${method} ${p}`, retryAfter: r.headers.get('retry-after') });
    const text = await r.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: r.status, headers: r.headers, body: json };
  };

  for (let i = 0; i < (opts.apis ?? 1); i++) await startApi();
  for (let i = 0; i < (opts.workers ?? 1); i++) startWorker();

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await Promise.all([...apis, ...workers].map((p) => p.kill('SIGKILL')));
    await db.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  onTeardown(close);
  return { env, db, databaseUrl, ws: { id: ws.id, fullKey: key.secret }, apis, workers, startApi, startWorker, call, seen, close };
}
