import { z } from 'zod';

/** Every event a video emits (workflows/video/video.ts), in the order they happen, then a live stream's (workflows/live/stream.ts). */
export const EVENT_TYPES = [
  'video.uploaded',
  'video.ready',
  'video.failed',
  'video.deleted',
  // SPEC §19 added audio tracks (api/audio/routes.ts, workflows/audio/track.ts)
  'video.audio_track.ready',
  'video.audio_track.failed',
  'video.audio_track.deleted',
  // Issue 37: captions timed from a transcript (api/captions/align.ts, workflows/jobs/captions.ts)
  'video.captions.ready',
  'video.captions.failed',
  'live_stream.connected',
  'live_stream.active',
  'live_stream.disconnected',
  'live_stream.idle',
  // SPEC §22 stream health (activities/live/health.ts)
  'live_stream.warning',
] as const;

const url = z.string().trim().min(1).max(2048);
const description = z.string().max(500);
const events = z
  .array(z.enum(EVENT_TYPES))
  .min(1, 'must name at least one event; leave it out for every event, or set enabled: false')
  .transform((list) => EVENT_TYPES.filter((t) => list.includes(t)));

export const createBody = z.object({
  url,
  events: events.optional(),
  description: description.optional(),
}).strict();

export const updateBody = z.object({
  url: url.optional(),
  /** null = every event type, including ones added later. */
  events: events.nullable().optional(),
  description: description.optional(),
  enabled: z.boolean().optional(),
  rotate_secret: z.boolean().optional(),
}).strict();

export const deliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(100).optional(),
}).strict();

// Answers and event payloads (documented in ./openapi.ts).
export const endpoint = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string(),
    events: z.array(z.enum(EVENT_TYPES)).nullable().meta({ description: 'null = every event type' }),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'WebhookEndpoint' });
export const endpointWithSecret = endpoint
  .extend({ secret: z.string().meta({ description: 'Shown on create and on rotate_secret only', example: 'whsec_…' }) })
  .meta({ id: 'WebhookEndpointWithSecret' });
export const endpointList = z.object({ data: z.array(endpoint) }).meta({ id: 'WebhookEndpointList' });
export const delivery = z
  .object({
    id: z.string(),
    endpoint_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed', 'cancelled']),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    last_response_body: z.string().nullable(),
    next_attempt_at: z.iso.datetime().nullable(),
    delivered_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'WebhookDelivery' });
export const deliveryList = z
  .object({ data: z.array(delivery), has_more: z.boolean(), next_cursor: z.string().nullable() })
  .meta({ id: 'WebhookDeliveryList' });
