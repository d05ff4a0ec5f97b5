import { checkFfmpeg } from '../lib/media';
import { loadConfig } from '../lib/config';
import { createDb } from '../lib/db';
import { createLogger } from '../lib/logger';
import { createStorage } from '../lib/storage';
import { createWorkers, type Role } from './workers';

/** `WORKER_ROLES=workflow,transcode` (default both) picks which task queues this process polls. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'worker');
  const roles: Role[] = config.temporal.workerRoles;
  if (roles.includes('transcode')) await checkFfmpeg({ ffmpegPath: config.media.ffmpegPath });
  const db = createDb(config.databaseUrl, config.databasePoolMax);
  const storage = createStorage(config);
  const { workers, close } = await createWorkers({ config, db, storage, log }, roles);
  log.info({ roles, queues: [config.temporal.taskQueue, config.temporal.transcodeQueue], concurrency: config.temporal.transcodeConcurrency }, 'workers started');
  // Worker.run() resolves after SIGINT/SIGTERM once in-flight tasks have drained.
  await Promise.all(workers.map((w) => w.run()));
  await close();
  await db.destroy();
  log.info('workers stopped');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
