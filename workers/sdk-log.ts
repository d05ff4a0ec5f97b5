import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import type { Logger } from '../lib/logger';

/**
 * The Temporal SDK's log, through our logger: one line in the worker's own format (short in a
 * terminal, JSON elsewhere), at WARN and above. Messages that describe our design rather than a
 * problem are dropped, so a newcomer has no warning to learn to ignore: the transcode queue's
 * worker registers activities only, on purpose (workers/workers.ts).
 */
const expected = [/^No workflows registered, not polling for workflow tasks/];

export function sdkLogger(log: Logger): DefaultLogger {
  return new DefaultLogger('WARN', (entry: LogEntry) => {
    if (expected.some((re) => re.test(entry.message))) return;
    const level = entry.level === 'ERROR' ? 'error' : entry.level === 'WARN' ? 'warn' : 'info';
    log[level]({ sdk: entry.meta }, entry.message);
  });
}
