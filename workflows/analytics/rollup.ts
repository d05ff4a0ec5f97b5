import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';

// The activity heartbeats between chunks of hours; a catch-up after a long outage may take minutes.
const { rollupAnalytics } = proxyActivities<Activities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '5s', maximumInterval: '1 minute', maximumAttempts: 5 },
});

/**
 * SPEC §18 rollup, started by the `analytics-rollup` Temporal Schedule (lib/analytics/schedule.ts):
 * recompute the hourly aggregates the raw events may still change. Idempotent: it replaces
 * buckets, so overlapping or repeated runs never double count.
 */
export async function analyticsRollupWorkflow(): Promise<unknown> {
  return rollupAnalytics();
}
