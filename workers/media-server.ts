// The ingest process (SPEC §17): node-media-server for RTMP, with the stream-key check and the
// signals to each live stream's workflow (lib/live/ingest.ts). Run on its own and supervised like
// the API and the workers (`npm run media-server`; scripts/start runs the compiled dist/). Ports: LIVE_RTMP_PORT (1935) on LIVE_INGEST_HOST; node-media-server's own HTTP port
// LIVE_MEDIA_HTTP_PORT (playback there needs the signature too).
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../lib/config';
import { createDb } from '../lib/db';
import { startIngestServer } from '../lib/live/ingest';
import { createLogger } from '../lib/logger';
import { temporalConnectionOptions } from '../lib/temporal';
import { installCrashGuards } from './guards';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'media-server', config.logFormat);
  installCrashGuards(log);
  const db = createDb(config.databaseUrl, 4);
  const connection = await Connection.connect(temporalConnectionOptions(config));
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  const server = await startIngestServer({ config, db, temporal, log });
  log.info({ host: config.live.ingestHost, rtmp: config.live.rtmpPort }, 'media server started');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.stop();
  await connection.close();
  await db.destroy();
  log.info('media server stopped');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
