import { proxyActivities, sleep, type RetryPolicy } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DeliveryWorkflowInput, DeliveryWorkflowResult } from '../lib/webhooks/deliveryTypes';

export type { DeliveryWorkflowInput, DeliveryWorkflowResult };

// The activity returns the receiver's failures; it throws only when the database does.
const retry: RetryPolicy = { initialInterval: '1s', maximumInterval: '1 minute', maximumAttempts: 10 };

/**
 * One event to one endpoint (SPEC §9): attempt, then sleep on a durable timer per the schedule
 * (or the receiver's longer Retry-After) until a 2xx, a 410, the end of the schedule, or the
 * endpoint is disabled or deleted. The API cancels the run when it disables or deletes the endpoint.
 */
export async function webhookDeliveryWorkflow(input: DeliveryWorkflowInput): Promise<DeliveryWorkflowResult> {
  const first = input.firstAttempt ?? 1;
  // Bounds one HTTP attempt plus a few queries. It is also how soon an attempt whose worker died
  // (SIGKILL, OOM) is tried again, so it follows the HTTP timeout rather than a fixed 2 minutes.
  const { deliverWebhook } = proxyActivities<Activities>({
    startToCloseTimeout: input.attemptTimeoutMs ? input.attemptTimeoutMs + 10_000 : '2 minutes',
    retry,
  });
  for (let i = 0; ; i++) {
    const retryDelayMs = i < input.scheduleMs.length ? input.scheduleMs[i] : null;
    const outcome = await deliverWebhook({ deliveryId: input.deliveryId, attempt: first + i, retryDelayMs });
    if (outcome.status !== 'retry') return outcome.status;
    await sleep(outcome.delayMs);
  }
}
