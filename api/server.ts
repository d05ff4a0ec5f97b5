import http from 'node:http';
import { loadConfig } from '../lib/config';
import { createDb } from '../lib/db';
import { createLogger } from '../lib/logger';
import { createStorage, S3Storage } from '../lib/storage';
import { createTemporalClient } from '../lib/temporal';
import { createApp } from './app';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'api');
  const db = createDb(config.databaseUrl, config.databasePoolMax);
  const storage = createStorage(config);
  if (storage instanceof S3Storage) await storage.ensureBucket();
  const temporal = createTemporalClient(config);
  const app = createApp({ config, db, storage, temporal, log });
  const server = http.createServer(app.callback());
  // Uploads through the local driver can take a long time; don't cut them off.
  server.requestTimeout = 0;
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  log.info({ url: config.publicBaseUrl, host: config.host, port: config.port }, 'API listening');

  const stop = async () => {
    log.info('shutting down');
    server.close();
    server.closeIdleConnections();
    await temporal.connection.close().catch(() => undefined);
    await db.destroy();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
