import cluster from 'node:cluster';
import http from 'node:http';
import { loadConfig } from '../lib/config';
import { createDb } from '../lib/db';
import { createLogger } from '../lib/logger';
import { createStorage, S3Storage } from '../lib/storage';
import { createTemporalClient } from '../lib/temporal';
import { serveMetrics } from '../lib/metrics/serve';
import { createApp } from './app';
import { apiMetricsText } from './metrics/collect';
import { startTusRecovery } from './tus/recover';
import { sealLegacyWebhookSecrets } from '../lib/webhooks/secrets';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'api', config.logFormat);
  const db = createDb(config.databaseUrl, config.databasePoolMax, { statementTimeoutMs: config.apiStatementTimeoutMs });
  const storage = createStorage(config);
  if (storage instanceof S3Storage) await storage.ensureBucket();
  const temporal = createTemporalClient(config);
  const deps = { config, db, storage, temporal, log };
  const app = createApp(deps);
  const server = http.createServer(app.callback());
  // Uploads through the local driver can take a long time; don't cut them off.
  server.requestTimeout = 0;
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  log.info({ url: config.publicBaseUrl, host: config.host, port: config.port }, 'API listening');
  const stopRecovery = startTusRecovery(deps);
  const { apiPort, host: metricsHost, token } = config.metrics;
  const metrics = apiPort ? await serveMetrics({ port: apiPort, host: metricsHost, token, log, collect: () => apiMetricsText(deps) }) : undefined;
  // Endpoints made before webhook secrets were sealed at rest (issue 22) get sealed once.
  void sealLegacyWebhookSecrets(db, config)
    .then((n) => n && log.info({ endpoints: n }, 'sealed webhook secrets stored in clear'))
    .catch((err) => log.warn({ err }, 'could not seal legacy webhook secrets; will try at the next start'));

  const stop = async () => {
    log.info('shutting down');
    stopRecovery();
    await metrics?.close();
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeIdleConnections();
    // In-flight responses finish (their bytes reach the bandwidth meter) before it is flushed.
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
    await app.close();
    await temporal.connection.close().catch(() => undefined);
    await db.destroy();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/**
 * API_PROCESSES > 1: a primary forks that many API processes sharing the port (node:cluster).
 * Nothing in a process needs the others: key revocations and playback changes reach every
 * process's caches by NOTIFY and rate limits are counted in Postgres or Redis. A process that
 * dies is replaced; SIGTERM/SIGINT stop them all, each flushing what it buffered.
 */
function primary(processes: number): void {
  let stopping = false;
  const fork = () => cluster.fork().on('exit', (code, signal) => {
    if (stopping) return;
    console.error(`API process exited (${signal ?? code}); starting another`);
    setTimeout(fork, 1000);
  });
  for (let i = 0; i < processes; i++) fork();
  const stop = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill(signal);
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

const processes = cluster.isPrimary ? loadConfig().hot.apiProcesses : 1;
if (processes > 1) {
  primary(processes);
} else {
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
