import type { Logger } from '../lib/logger';

/**
 * Keeps one job's stray error from killing the worker process (and with it every other video's
 * work, and scripts/start's whole stack: issue 9). Activities report their own failures to
 * Temporal; what reaches these handlers escaped an activity (a stream 'error' nobody listened
 * to, a promise nobody awaited). It is logged with its stack and the worker keeps serving.
 */
export function installCrashGuards(log: Logger): () => void {
  const onRejection = (reason: unknown) => log.error({ err: reason }, 'unhandled promise rejection in the worker (kept running)');
  const onException = (err: Error, origin: string) => log.error({ err, origin }, 'uncaught exception in the worker (kept running)');
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  return () => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  };
}
