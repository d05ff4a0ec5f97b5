import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';
import type { Config } from '../config';
import { Priority } from '../../workflows/priority';

/** The schedule's id: one per task queue, so test stacks never share one. */
export const rollupScheduleId = (config: Config): string => `analytics-rollup-${config.temporal.taskQueue}`;

/**
 * Creates the rollup's Temporal Schedule (visible in the UI under Schedules) if it is missing,
 * or brings its interval and task queue up to date: safe to call at every worker start.
 */
export async function ensureRollupSchedule(client: Client, config: Config): Promise<string> {
  const scheduleId = rollupScheduleId(config);
  const spec = { intervals: [{ every: config.analytics.rollupEverySeconds * 1000 }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'analyticsRollupWorkflow',
    taskQueue: config.temporal.taskQueue,
    workflowId: `analytics-rollup-${config.temporal.taskQueue}`,
    args: [],
    // SPEC §25: bookkeeping at the default level, every workspace's events at once (no fairness key).
    priority: { priorityKey: Priority.normal },
  };
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
      memo: { description: 'Viewer analytics: hourly aggregates from raw beacons (docs/analytics.md)' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, spec, action }));
  }
  return scheduleId;
}
