import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';
import { liveStream } from '../live/schema';
import { videoRead } from '../videos/schema';
import { createBody, deliveriesQuery, delivery, deliveryList, endpoint, endpointList, endpointWithSecret, EVENT_TYPES, updateBody } from './schema';

const event = (type: string, withError: boolean) =>
  z.object({
    id: z.string().meta({ example: 'evt_…' }),
    type: z.literal(type),
    created_at: z.iso.datetime(),
    workspace_id: z.string(),
    data: type.startsWith('live_stream.')
      ? z.object({
          live_stream: liveStream,
          video_id: z.string().nullable().meta({ description: 'The broadcast\'s recording (on `idle`: null when nothing was recorded)' }),
          reason: z.string().optional().meta({ description: 'Why the encoder is gone (`disconnected`, `idle`)' }),
          warning: z
            .object({ code: z.enum(['keyframe_interval_high', 'bitrate_over_plan']), message: z.string() })
            .optional()
            .meta({ description: '`warning`: what is wrong with the feed (sent once per code per encoder connection)' }),
        })
      : withError
        ? z.object({ video: videoRead, error: z.object({ code: z.string(), message: z.string() }) })
        : z.object({ video: videoRead }),
  });

const SIGNED = z.object({
  'webhook-id': z.string().meta({ description: 'The event id; stable across retries' }),
  'webhook-timestamp': z.string().meta({ description: 'Unix seconds' }),
  'webhook-signature': z.string().meta({ description: '`v1,<base64 HMAC-SHA256(secret, "<id>.<timestamp>.<body>")>` (Standard Webhooks)' }),
});

export function webhookDocs(d: DocContext): void {
  const tag = 'Webhooks';
  const params = z.object({ id: z.string().meta({ example: 'whk_…' }) });
  operation(d, {
    method: 'post', path: '/webhooks', operationId: 'createWebhook', tag, summary: 'Add an endpoint; the secret is in this answer only',
    body: createBody, responses: { 201: endpointWithSecret }, errors: [403],
  });
  operation(d, { method: 'get', path: '/webhooks', operationId: 'listWebhooks', tag, summary: 'List endpoints', responses: { 200: endpointList } });
  operation(d, { method: 'get', path: '/webhooks/{id}', operationId: 'getWebhook', tag, summary: 'Read an endpoint', params, responses: { 200: endpoint }, errors: [404] });
  operation(d, {
    method: 'patch', path: '/webhooks/{id}', operationId: 'updateWebhook', tag,
    summary: 'Change an endpoint; `rotate_secret: true` answers the new secret',
    params, body: updateBody, responses: { 200: z.union([endpointWithSecret, endpoint]) }, errors: [403, 404],
  });
  operation(d, {
    method: 'delete', path: '/webhooks/{id}', operationId: 'deleteWebhook', tag, summary: 'Delete an endpoint',
    params, responses: { 204: { description: 'Deleted' } }, errors: [403, 404],
  });
  operation(d, {
    method: 'get', path: '/webhooks/{id}/deliveries', operationId: 'listWebhookDeliveries', tag, summary: 'Delivery log, newest first',
    params, query: deliveriesQuery, responses: { 200: deliveryList }, errors: [400, 404],
  });
  operation(d, {
    method: 'post', path: '/webhooks/{id}/deliveries/{delivery_id}/retry', operationId: 'retryWebhookDelivery', tag,
    summary: 'Deliver again (409 `delivery_in_progress`, `endpoint_disabled`)',
    params: params.extend({ delivery_id: z.string().meta({ example: 'dlv_…' }) }), responses: { 202: delivery }, errors: [403, 404],
  });

  for (const type of EVENT_TYPES) {
    d.registry.registerWebhook({
      method: 'post',
      path: type,
      operationId: `event_${type.replace('.', '_')}`,
      summary: `\`${type}\` to each subscribed endpoint`,
      description: 'Any 2xx within the timeout is success; otherwise retried on durable timers (Retry-After honoured); 410 disables the endpoint.',
      tags: [tag],
      request: { headers: SIGNED, body: { content: { 'application/json': { schema: event(type, type === 'video.failed') } } } },
      responses: { 200: { description: 'Any 2xx acknowledges the event' } },
    });
  }
}
