import { Context } from '@temporalio/activity';
import { runRollup } from '../../lib/analytics/rollup';
import { cancelScope, runCancellable } from '../../lib/db';
import type { ActivityDeps } from '../deps';

/** How often the activity heartbeats while a statement runs (its heartbeat timeout is 2 minutes). */
const HEARTBEAT_MS = 10_000;

/** The rollup activity: partitions ahead, old ones dropped, past salts deleted, buckets recomputed (lib/analytics/rollup.ts). */
export function analyticsActivities({ db, config, log }: ActivityDeps) {
  return {
    async rollupAnalytics() {
      const ctx = Context.current();
      const started = Date.now();
      // Heartbeats go on while a statement runs (not only between chunks: a chunk's statement may
      // outlast the heartbeat timeout), and a cancelled or timed-out attempt cancels its statement
      // in Postgres rather than leaving it running beside the retry (issue 45).
      let last: unknown = { started: new Date(started).toISOString() };
      const beat = setInterval(() => ctx.heartbeat(last), HEARTBEAT_MS);
      const { result, running } = runCancellable(() =>
        runRollup(db, { rawDays: config.analytics.rawDays, lookbackHours: config.analytics.lookbackHours, settleMs: 2 * config.analytics.flushMs + 5000 }, Date.now(), (p) => {
          last = p;
          ctx.heartbeat(p);
        }),
      );
      const stop = () => void cancelScope(db, running).catch((err: unknown) => log.warn({ err }, 'analytics rollup: could not cancel its statement'));
      ctx.cancellationSignal.addEventListener('abort', stop);
      try {
        const out = await result;
        log.info({ ...out, ms: Date.now() - started }, 'analytics rollup');
        return out;
      } finally {
        clearInterval(beat);
        ctx.cancellationSignal.removeEventListener('abort', stop);
      }
    },
  };
}
