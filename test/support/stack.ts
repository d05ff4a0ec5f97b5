import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Client } from '@temporalio/client';
import type { WorkflowBundle } from '@temporalio/worker';
import { globalHandlers } from '@temporalio/worker/lib/workflow/vm-shared';
import request from 'supertest';
import { type App, createApp } from '../../api/app';
import { apiMetricsText } from '../../api/metrics/collect';
import { serveMetrics } from '../../lib/metrics/serve';
import { loadConfig, type Config } from '../../lib/config';
import { createDb, type Db } from '../../lib/db';
import { randomToken } from '../../lib/ids';
import { createApiKey, createWorkspace } from '../../lib/keys';
import { createLogger } from '../../lib/logger';
import { createStorage, S3Storage, type Storage } from '../../lib/storage';
import { createWorkers } from '../../workers/workers';
import { loadWorkflowBundle } from '../../workers/workflow-bundle';
import { ContractChecker } from './contract';
import { onTeardown, s3Server, temporalEnv, testDatabase } from './hooks';

let bundle: Promise<WorkflowBundle> | undefined;
/**
 * Bundling the workflows takes seconds; every in-process worker of the run shares one bundle: the
 * one scripts/test built for the whole run (WORKFLOW_BUNDLE_PATH, which the workers it spawns
 * inherit too), else one of this process's own.
 */
export function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= loadWorkflowBundle(process.env.WORKFLOW_BUNDLE_PATH, { warn: (msg) => console.warn(msg) }).then((b) => b.bundle);
  return bundle;
}

/**
 * Test stacks run workflow code in the test process's own thread (`workflowsInMainThread`). The
 * SDK then installs its stack-trace promise hook on this whole process, where it was meant for a
 * worker thread's own isolate ("insignificant unless the worker is run in debug mode", its source
 * says): every promise of the API, pg, knex and the tests compiled a function to learn it was not
 * a workflow's, ≈ 7 % of a test process's CPU in a profile of five files. Only the error-stack
 * mapping is installed; workflow stack-trace queries (the Temporal UI's "Stack Trace" tab) are
 * empty for in-process test workers, and production workers (a worker thread) keep both.
 */
function withoutProcessWidePromiseHook(): void {
  if (globalHandlers.installed) return;
  (globalHandlers as unknown as { overridePrepareStackTrace(): void }).overridePrepareStackTrace();
  globalHandlers.installed = true;
}

export interface Workspace {
  id: string;
  fullKey: string;
  readKey: string;
}

export interface Stack {
  url: string;
  /** The API's Prometheus endpoint: its own loopback port, as in production (API_METRICS_PORT). */
  metricsUrl: string;
  config: Config;
  env: Record<string, string>;
  app: App;
  db: Db;
  storage: Storage;
  temporal: Client;
  ws: Workspace;
  /** supertest bound to the stack, with the full key unless `key` says otherwise. */
  get(p: string, key?: string): request.Test;
  post(p: string, body?: unknown, key?: string): request.Test;
  patch(p: string, body?: unknown, key?: string): request.Test;
  del(p: string, key?: string): request.Test;
  newWorkspace(plan?: 'free' | 'starter' | 'pro' | 'business'): Promise<Workspace>;
  close(): Promise<void>;
}

export interface StackOptions {
  storage?: 'local' | 's3';
  env?: Record<string, string>;
  /** Which worker roles run in this process (default both; [] for none). */
  workers?: Array<'workflow' | 'transcode' | 'live'>;
}

/**
 * An API on a free port plus in-process workers, on the run's real Temporal, Postgres and (for
 * `s3`) S3 server. Each stack has its own task queues so stacks never take each other's work.
 */
// Stacks close at the end of the run (onTeardown), but each holds Postgres connections (its
// LISTEN connection and pool) until then; with ~100 stacks a run, Postgres's default 100
// connections ran out. Mocha runs files one after another and a file's stacks are its own, so
// beyond the most recent MAX_OPEN_STACKS the oldest are closed as new ones start. A full run's
// shards (ops/shards.ts) share the machine's Postgres, so each keeps a share of the ten, and a
// stack's idle pooled connections close after 2 s instead of 30.
export const MAX_OPEN_STACKS = Math.max(4, Math.floor(10 / Math.max(1, Number(process.env.VH_TEST_SHARD_COUNT ?? 1) || 1)));
const IDLE_MS = 2000;
const openStacks: Array<() => Promise<void>> = [];

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  while (openStacks.length >= MAX_OPEN_STACKS) await openStacks[0]();
  const [temporalTest, tdb] = await Promise.all([temporalEnv(), testDatabase()]);
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const suffix = randomToken(4).replace(/[^a-zA-Z0-9]/g, 'x');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-stack-'));
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    DATA_DIR: dataDir,
    DATABASE_URL: tdb.url,
    TEMPORAL_ADDRESS: temporalTest.address,
    TEMPORAL_TASK_QUEUE: `video-${suffix}`,
    TEMPORAL_TRANSCODE_QUEUE: `transcode-${suffix}`,
    TEMPORAL_LIVE_QUEUE: `live-${suffix}`,
    TRANSCODE_CONCURRENCY: '2',
    TRANSCODE_HEARTBEAT_TIMEOUT_MS: '5000',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    UPLOAD_SIGNING_SECRET: randomToken(24),
    PLAYBACK_SIGNING_KEYS: `k1:${randomToken(24)}`,
    WEBHOOK_RETRY_SCHEDULE: '200ms,400ms,800ms',
    WEBHOOK_TIMEOUT_MS: '2000',
    ALLOW_LOOPBACK_URLS: 'true',
    CONFIRM_WAIT_MS: '20000',
    X264_PRESET: 'ultrafast',
    // Tests poll reads while videos process; on a slow machine three uploads polled at once pass
    // 100 a minute. The limit is tested where it is set on purpose (test/api/platform.test.ts,
    // test/hot/keys.test.ts).
    RATE_LIMIT_PER_MINUTE: '100000',
    // Likewise the per-minute budgets of on-demand image renders (tested on purpose in
    // test/outputs/renders-burst.test.ts).
    RENDER_BUDGET_PER_ADDRESS_PER_MINUTE: '100000',
    RENDER_BUDGET_PER_VIDEO_PER_MINUTE: '100000',
    // And beacons per client address: every stack shares one test database, so every stack's
    // beacons from 127.0.0.1 share one counter (tested on purpose in test/analytics/live.test.ts).
    ANALYTICS_BEACONS_PER_MINUTE: '100000',
  };
  if (opts.storage === 's3') {
    const s3 = await s3Server();
    Object.assign(env, {
      STORAGE_DRIVER: 's3',
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: `vh-${suffix.toLowerCase()}`,
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
    });
  }
  Object.assign(env, opts.env);
  const config = loadConfig(env);
  const log = createLogger(config.logLevel, 'test');
  // The API's bound on every statement (API_STATEMENT_TIMEOUT_MS) holds for the stack's pool too:
  // the in-process workers share it, and tests' rollups are small.
  const db = createDb(config.databaseUrl, 10, { idleTimeoutMillis: IDLE_MS, statementTimeoutMs: config.apiStatementTimeoutMs });
  // Analytics reads are as of the rollup's last run once it has run (docs/analytics.md), and every
  // stack of a shard shares one database: a file starts as if the rollup had never run, whatever
  // ran before it in its shard (a spawned worker's rollup Schedule, another file's runRollup).
  await db('analytics_rollup_state').delete();
  const storage = createStorage(config);
  if (storage instanceof S3Storage) await storage.ensureBucket();
  const temporal = new Client({ connection: temporalTest.connection, namespace: config.temporal.namespace });
  const app = createApp({ config, db, storage, temporal, log });
  server.on('request', app.callback());
  const metrics = (await serveMetrics({ port: 0, host: '127.0.0.1', log, collect: () => apiMetricsText({ db, config }) }))!;

  const roles = opts.workers ?? ['workflow', 'transcode'];
  if (roles.includes('workflow')) withoutProcessWidePromiseHook();
  const w = roles.length
    ? await createWorkers({ config, db, storage, log }, roles, { connection: temporalTest.nativeConnection, workflowBundle: await workflowBundle(), workflowsInMainThread: true })
    : undefined;
  const running = w ? w.workers.map((wk) => wk.run()) : [];

  const makeWorkspace = async (plan: 'free' | 'starter' | 'pro' | 'business' = 'free'): Promise<Workspace> => {
    const ws = await createWorkspace(db, `test-${randomToken(3)}`, plan);
    const full = await createApiKey(db, ws.id, 'full', 'test');
    const read = await createApiKey(db, ws.id, 'read', 'test-read');
    return { id: ws.id, fullKey: full.secret, readKey: read.secret };
  };
  const ws = await makeWorkspace();
  const agent = request(`http://127.0.0.1:${port}`);
  // Every answer the helpers get is checked against the OpenAPI document (SPEC §16): a mismatch
  // fails the test that made the request.
  const contract = ContractChecker.forConfig(config);
  const auth = (t: request.Test, key?: string) =>
    t.set('Authorization', `Bearer ${key ?? ws.fullKey}`).expect((res) => contract.check(t.method, t.url, res));

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    const i = openStacks.indexOf(close);
    if (i >= 0) openStacks.splice(i, 1);
    for (const wk of w?.workers ?? []) if (wk.getState() === 'RUNNING') wk.shutdown();
    await Promise.allSettled(running);
    await w?.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await metrics.close();
    await app.close();
    await db.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  onTeardown(close);
  openStacks.push(close);

  return {
    url: `http://127.0.0.1:${port}`,
    metricsUrl: metrics.url,
    config,
    env,
    app,
    db,
    storage,
    temporal,
    ws,
    get: (p, key) => auth(agent.get(p), key),
    post: (p, body, key) => auth(agent.post(p), key).send(body as object),
    patch: (p, body, key) => auth(agent.patch(p), key).send(body as object),
    del: (p, key) => auth(agent.delete(p), key),
    newWorkspace: makeWorkspace,
    close,
  };
}
