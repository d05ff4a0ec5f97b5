import { Client, Connection } from '@temporalio/client';
import { makeTelemetryFilterString, Runtime } from '@temporalio/worker';
import { ensureRollupSchedule } from '../lib/analytics/schedule';
import { temporalConnectionOptions } from '../lib/temporal';
import { checkFfmpeg, detectPrlimit, resolveSandbox } from '../lib/media';
import { loadConfig } from '../lib/config';
import { createDb } from '../lib/db';
import { createLogger } from '../lib/logger';
import { createStorage } from '../lib/storage';
import { installCrashGuards } from './guards';
import { sdkLogger } from './sdk-log';
import { workerMetrics } from './metrics';
import { createWorkers, type Role } from './workers';
import { loadWorkflowBundle } from './workflow-bundle';

/** `WORKER_ROLES=workflow,transcode` (default both) picks which task queues this process polls. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'worker', config.logFormat);
  installCrashGuards(log);
  // Core exports the SDK's metrics (task latencies, slots, polls) on a loopback port; the worker's
  // own /metrics appends them, so Prometheus scrapes one target per worker.
  // TEMPORAL_METRICS_PORT=0 turns that export off.
  let temporalMetrics = config.metrics.temporalPort ? `127.0.0.1:${config.metrics.temporalPort}` : undefined;
  const logging = { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} };
  try {
    Runtime.install({
      logger: sdkLogger(log),
      telemetryOptions: { logging, ...(temporalMetrics ? { metrics: { prometheus: { bindAddress: temporalMetrics } } } : {}) },
    });
  } catch (err) {
    // A busy port costs the SDK's metrics, never the worker (Core refuses to start otherwise).
    log.warn({ err, bindAddress: temporalMetrics }, 'Temporal SDK metrics unavailable');
    temporalMetrics = undefined;
    Runtime.install({ logger: sdkLogger(log), telemetryOptions: { logging } });
  }
  const roles: Role[] = config.temporal.workerRoles;
  // Quiet start: one line when the worker is up (its sandbox in it); a line of its own only to warn.
  let sandboxMode: string | undefined;
  if (roles.includes('transcode') || roles.includes('live')) {
    await checkFfmpeg({ ffmpegPath: config.media.ffmpegPath });
    const sandbox = await resolveSandbox(config.media.sandbox);
    const msg = `media sandbox: ${sandbox.mode}${sandbox.reason ? ` (${sandbox.reason})` : ''}`;
    if (sandbox.mode === 'none') log.warn({ sandbox: sandbox.mode, configured: config.media.sandbox }, msg);
    sandboxMode = sandbox.mode;
    if (!(await detectPrlimit())) log.warn('prlimit (util-linux) not found: ffmpeg runs without CPU/memory/file-size rlimits (the wall-time bound still applies)');
  }
  const db = createDb(config.databaseUrl, config.databasePoolMax);
  const storage = createStorage(config);
  // The prebuilt bundle (WORKFLOW_BUNDLE_PATH; scripts/start and scripts/test build one) saves the
  // ~3 s of CPU webpack takes at each start, restarts after a crash included.
  const loaded = roles.includes('workflow')
    ? await loadWorkflowBundle(config.temporal.workflowBundlePath, { warn: (msg) => log.warn({ workflowBundlePath: config.temporal.workflowBundlePath }, msg) })
    : undefined;
  const workflowBundle = loaded?.bundle;
  const { workers, close } = await createWorkers({ config, db, storage, log }, roles, { workflowBundle });
  if (roles.includes('workflow')) await ensureAnalyticsSchedule(config, log);
  const metrics = await workerMetrics({
    port: config.metrics.port,
    host: config.metrics.host,
    token: config.metrics.token,
    temporalUrl: temporalMetrics && `http://${temporalMetrics}/metrics`,
    log,
  });
  const started = `workers started (${roles.join(' + ')}${sandboxMode ? `; media sandbox: ${sandboxMode}` : ''})`;
  log.info({ roles, sandbox: sandboxMode, workflowBundle: loaded && (loaded.prebuilt ? config.temporal.workflowBundlePath : 'bundled at start'), queues: [config.temporal.taskQueue, config.temporal.transcodeQueue, config.live.queue], concurrency: config.temporal.transcodeConcurrency, metrics: metrics?.url }, started);
  // Worker.run() resolves after SIGINT/SIGTERM once in-flight tasks have drained.
  await Promise.all(workers.map((w) => w.run()));
  await close();
  await metrics?.close();
  await db.destroy();
  log.info('workers stopped');
}

/** The viewer-analytics rollup's Temporal Schedule (SPEC §18); a failure is logged, never fatal. */
async function ensureAnalyticsSchedule(config: ReturnType<typeof loadConfig>, log: ReturnType<typeof createLogger>): Promise<void> {
  const connection = await Connection.connect(temporalConnectionOptions(config));
  try {
    const id = await ensureRollupSchedule(new Client({ connection, namespace: config.temporal.namespace }), config);
    log.info({ scheduleId: id, everySeconds: config.analytics.rollupEverySeconds }, 'analytics rollup schedule ready');
  } catch (err) {
    log.warn({ err }, 'analytics rollup schedule could not be created; will retry at next start');
  } finally {
    await connection.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
