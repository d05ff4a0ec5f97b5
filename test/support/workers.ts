import { createLogger } from '../../lib/logger';
import { createWorkers } from '../../workers/workers';
import { temporalEnv } from './hooks';
import { type Stack, workflowBundle } from './stack';

/**
 * Workers of `roles` on a stack's queues (a stack started with `workers: []`), to stop and start
 * at will: a test holds a moment open by taking the workers that would end it away. The returned
 * stop is idempotent.
 */
export async function startWorkers(s: Pick<Stack, 'config' | 'db' | 'storage'>, roles: Array<'workflow' | 'transcode'>): Promise<() => Promise<void>> {
  const { nativeConnection } = await temporalEnv();
  const w = await createWorkers({ config: s.config, db: s.db, storage: s.storage, log: createLogger('silent', 'test') }, roles, {
    connection: nativeConnection,
    workflowBundle: await workflowBundle(),
    workflowsInMainThread: true,
  });
  const running = w.workers.map((wk) => wk.run());
  let stopped: Promise<void> | undefined;
  return () =>
    (stopped ??= (async () => {
      for (const wk of w.workers) wk.shutdown();
      await Promise.all(running);
      await w.close();
    })());
}
