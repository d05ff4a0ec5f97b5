// The live ingest's hooks (SPEC §17, §22): the stream-key check the live edge asks for every
// publisher, and the connected/disconnected hooks that signal each live stream's workflow
// (lib/live/ingest.ts). The edge (ingest/, `vidhost-edge`) is the only ingest (RTMP on
// LIVE_RTMP_PORT, SRT, WHIP); this process serves it on loopback LIVE_SRT_CHECK_PORT. Run on its
// own and supervised like the API and the workers (`npm run live-hooks`; scripts/start runs the
// compiled dist/). No media passes through it.
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../lib/config';
import { createDb } from '../lib/db';
import { startIngestServer } from '../lib/live/ingest';
import { createLogger } from '../lib/logger';
import { temporalConnectionOptions } from '../lib/temporal';
import { installCrashGuards } from './guards';

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'live-hooks', config.logFormat);
  installCrashGuards(log);
  const db = createDb(config.databaseUrl, 4);
  const connection = await Connection.connect(temporalConnectionOptions(config));
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  const server = await startIngestServer({ config, db, temporal, log });
  log.info({ port: server.port }, 'live hooks started');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.stop();
  await connection.close();
  await db.destroy();
  log.info('live hooks stopped');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
