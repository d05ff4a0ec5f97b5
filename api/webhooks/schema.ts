import { z } from 'zod';

/** Every event a video emits (workflows/video.ts), in the order they happen. */
export const EVENT_TYPES = ['video.uploaded', 'video.ready', 'video.failed', 'video.deleted'] as const;

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
