/**
 * The webhook delivery workflow's input and result, below both the workflow (workflows/delivery.ts)
 * and the activity that starts it (activities/events.ts), so neither imports the other.
 */
export interface DeliveryWorkflowInput {
  deliveryId: string;
  /** Waits between attempts (config WEBHOOK_RETRY_SCHEDULE); one attempt more than waits. */
  scheduleMs: number[];
  /** Numbering continues across a manual retry, so `attempts` counts every request sent. */
  firstAttempt?: number;
  /** One HTTP attempt's limit (WEBHOOK_TIMEOUT_MS); absent in runs started before it was passed. */
  attemptTimeoutMs?: number;
}

export type DeliveryWorkflowResult = 'succeeded' | 'failed' | 'cancelled';
