import { retryDelay } from '../lib/webhooks/retry';
import { sendWebhook } from '../lib/webhooks/send';
import { openWebhookSecret } from '../lib/webhooks/secrets';
import { webhookHeaders } from '../lib/webhooks/signature';
import type { ActivityDeps } from './deps';

export interface DeliverInput {
  deliveryId: string;
  attempt: number;
  /** The schedule's wait before the next attempt; null when this attempt is the last. */
  retryDelayMs: number | null;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'cancelled';

/** What the workflow does next: stop, or sleep `delayMs` and try again. */
export type DeliveryOutcome = { status: 'succeeded' | 'failed' | 'cancelled' } | { status: 'retry'; delayMs: number };

interface DeliveryJoin {
  status: DeliveryStatus;
  event_id: string;
  payload: unknown;
  endpoint_id: string;
  url: string;
  secret: string;
  enabled: boolean;
  deleted_at: Date | null;
}

/**
 * One attempt of one delivery (SPEC §9). A receiver's failure is an outcome, not an exception, so
 * Temporal retries this activity only for our own failures (the database); the workflow owns the
 * schedule. Writes are guarded by `status = 'pending'`, so a delivery the API cancelled stays so.
 */
export function webhookActivities({ config, db }: ActivityDeps) {
  return {
    async deliverWebhook(p: DeliverInput): Promise<DeliveryOutcome> {
      const row: DeliveryJoin | undefined = await db('webhook_deliveries as d')
        .join('events as e', 'e.id', 'd.event_id')
        .join('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
        .where('d.id', p.deliveryId)
        .first('d.status', 'e.id as event_id', 'e.payload', 'w.id as endpoint_id', 'w.url', 'w.secret', 'w.enabled', 'w.deleted_at');
      if (!row) return { status: 'cancelled' };
      // Settled already: by an earlier try of this activity, or cancelled through the API.
      if (row.status !== 'pending') return { status: row.status };
      const pending = () => db('webhook_deliveries').where({ id: p.deliveryId, status: 'pending' });
      if (row.deleted_at || !row.enabled) {
        await pending().update({ status: 'cancelled', next_attempt_at: null, updated_at: new Date() });
        return { status: 'cancelled' };
      }

      const body = JSON.stringify(row.payload);
      const timestamp = Math.floor(Date.now() / 1000);
      const res = await sendWebhook(row.url, body, webhookHeaders(openWebhookSecret(config, row.secret), row.event_id, timestamp, body), {
        timeoutMs: config.webhooks.timeoutMs,
        allowLoopback: config.allowLoopbackUrls,
      });

      const now = new Date();
      const record = {
        attempts: p.attempt,
        last_status_code: res.statusCode,
        last_error: res.error,
        last_response_body: res.responseBody,
        updated_at: now,
      };
      let outcome: DeliveryOutcome;
      let patch: Record<string, unknown>;
      if (res.ok) {
        outcome = { status: 'succeeded' };
        patch = { status: 'succeeded', delivered_at: now, next_attempt_at: null };
      } else if (res.statusCode === 410) {
        // 410 Gone: the receiver says this endpoint is retired (Standard Webhooks).
        await db('webhook_endpoints')
          .where({ id: row.endpoint_id, enabled: true })
          .update({ enabled: false, disabled_reason: 'gone', updated_at: now });
        outcome = { status: 'failed' };
        patch = { status: 'failed', next_attempt_at: null };
      } else if (p.retryDelayMs === null) {
        outcome = { status: 'failed' };
        patch = { status: 'failed', next_attempt_at: null };
      } else {
        const delayMs = retryDelay(p.retryDelayMs, res.retryAfterMs);
        outcome = { status: 'retry', delayMs };
        patch = { next_attempt_at: new Date(now.getTime() + delayMs) };
      }
      if (await pending().update({ ...record, ...patch })) return outcome;
      // Cancelled while the request was in flight: keep what the attempt saw, but not its verdict.
      await db('webhook_deliveries').where({ id: p.deliveryId }).update(record);
      return { status: 'cancelled' };
    },
  };
}
