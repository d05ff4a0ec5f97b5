import { loadConfig } from '../../lib/config';
import { createDb } from '../../lib/db';
import { createLogger } from '../../lib/logger';
import { createStorage, type Storage } from '../../lib/storage';
import { createWorkers } from '../../workers/workers';

/**
 * workers/main.ts with a pause point, so a fault test can SIGKILL it at a known step instead of
 * hoping to catch it there: the real activities and storage, but the first call that reaches the
 * point prints `FAULT-PAUSED <point> <key>` and never returns.
 *   FAULT_PAUSE_AT=probe    the first read of an original (the probe is the first activity to read it)
 *   FAULT_PAUSE_AT=segment  the second HLS segment upload of a rendition (one is already stored)
 */
const point = process.env.FAULT_PAUSE_AT;

function pausing(storage: Storage): Storage {
  let segments = 0;
  const pause = (key: string): Promise<never> => {
    process.stdout.write(`FAULT-PAUSED ${point} ${key}\n`);
    return new Promise<never>(() => undefined);
  };
  return new Proxy(storage, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (point === 'probe' && prop === 'mediaSource') return (key: string) => pause(key);
      if (point === 'segment' && prop === 'putFile') {
        return (key: string, ...rest: unknown[]) => (key.endsWith('.ts') && ++segments === 2 ? pause(key) : value.call(target, key, ...rest));
      }
      return value.bind(target);
    },
  });
}

async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'worker');
  const db = createDb(config.databaseUrl, config.databasePoolMax);
  const { workers } = await createWorkers({ config, db, storage: pausing(createStorage(config)), log }, config.temporal.workerRoles);
  await Promise.all(workers.map((w) => w.run()));
}

// Only as a process of its own (mocha given the directory loads every .ts file in it).
if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exitCode = 1;
  });
}
