import { proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities';

export interface DeliveryWorkflowInput {
  deliveryId: string;
  /** Waits between attempts (config WEBHOOK_RETRY_SCHEDULE); one attempt more than waits. */
  scheduleMs: number[];
  /** Numbering continues across a manual retry, so `attempts` counts every request sent. */
  firstAttempt?: number;
}

export type DeliveryWorkflowResult = 'succeeded' | 'failed' | 'cancelled';

const { deliverWebhook } = proxyActivities<Activities>({
  // Bounds one HTTP attempt (WEBHOOK_TIMEOUT_MS, 15 s by default) plus a few queries.
  startToCloseTimeout: '2 minutes',
  // The activity returns the receiver's failures; it throws only when the database does.
  retry: { initialInterval: '1s', maximumInterval: '1 minute', maximumAttempts: 10 },
});

/**
 * One event to one endpoint (SPEC §9): attempt, then sleep on a durable timer per the schedule
 * (or the receiver's longer Retry-After) until a 2xx, a 410, the end of the schedule, or the
 * endpoint is disabled or deleted. The API cancels the run when it disables or deletes the endpoint.
 */
export async function webhookDeliveryWorkflow(input: DeliveryWorkflowInput): Promise<DeliveryWorkflowResult> {
  const first = input.firstAttempt ?? 1;
  for (let i = 0; ; i++) {
    const retryDelayMs = i < input.scheduleMs.length ? input.scheduleMs[i] : null;
    const outcome = await deliverWebhook({ deliveryId: input.deliveryId, attempt: first + i, retryDelayMs });
    if (outcome.status !== 'retry') return outcome.status;
    await sleep(outcome.delayMs);
  }
}
