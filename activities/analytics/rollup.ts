import { Context } from '@temporalio/activity';
import { runRollup } from '../../lib/analytics/rollup';
import type { ActivityDeps } from '../deps';

/** The rollup activity: partitions ahead, old ones dropped, past salts deleted, buckets recomputed (lib/analytics/rollup.ts). */
export function analyticsActivities({ db, config, log }: ActivityDeps) {
  return {
    async rollupAnalytics() {
      const ctx = Context.current();
      const started = Date.now();
      const result = await runRollup(db, { rawDays: config.analytics.rawDays, lookbackHours: config.analytics.lookbackHours, settleMs: 2 * config.analytics.flushMs + 5000 }, Date.now(), (p) => ctx.heartbeat(p));
      log.info({ ...result, ms: Date.now() - started }, 'analytics rollup');
      return result;
    },
  };
}
