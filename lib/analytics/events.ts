import { z } from 'zod';
import { storableText } from '../text';

/** SPEC §18 event names. */
export const EVENT_NAMES = ['viewstart', 'playing', 'pause', 'seeked', 'rebufferstart', 'rebufferend', 'rendition', 'error', 'heartbeat', 'ended', 'viewend'] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export const MAX_BEACON_BYTES = 16 * 1024;
export const MAX_BEACON_EVENTS = 100;

const INT32 = 2 ** 31 - 1;
/** Every string of an event: no NUL, no unpaired surrogate (lib/text.ts), or the whole body is 400. */
const text = (max: number, min = 0) => z.string().min(min).max(max).refine(storableText, 'must not contain NUL (\\u0000) or an unpaired UTF-16 surrogate');

/**
 * One SPEC §18 event. Unknown fields are dropped (newer senders stay welcome). Two optional
 * counters from the player's own clock make durations exact whatever the network did:
 * `elapsed_ms` (since the view began) and `watch_ms` (playback time so far, cumulative; never more
 * than `elapsed_ms`). Without them, watch time and startup are derived from positions and the
 * events' order (lib/analytics/aggregate.ts).
 */
export const beaconEvent = z.object({
  view_id: z.uuid(),
  seq: z.number().int().min(0).max(INT32),
  subject: text(2048, 1),
  event: z.enum(EVENT_NAMES),
  position: z.number().min(0).max(1e7),
  rendition: text(32).nullish(),
  bitrate: z.number().int().min(0).max(INT32).nullish(),
  error_code: text(100).nullish(),
  elapsed_ms: z.number().int().min(0).max(INT32).nullish(),
  watch_ms: z.number().int().min(0).max(INT32).nullish(),
  player: z.object({ name: text(50), version: text(50).optional() }),
  /** The player's displayed height in device pixels (CSS height × devicePixelRatio): upscale/downscale. */
  player_height: z.number().int().min(1).max(16384).nullish(),
  /** Live: seconds behind the live edge, as the player reports it (hls.js `latency`, Shaka `liveLatency`). */
  latency: z.number().min(0).max(3600).nullish(),
}).refine((e) => e.watch_ms == null || e.elapsed_ms == null || e.watch_ms <= e.elapsed_ms + 1000, {
  // Both on the player's clock since the view began: no more time played than passed (1 s for rounding).
  message: 'watch_ms cannot exceed elapsed_ms',
  path: ['watch_ms'],
});
export type BeaconEvent = z.infer<typeof beaconEvent>;

const beaconArray = z.array(beaconEvent).min(1).max(MAX_BEACON_EVENTS);
const oneEvent = beaconEvent.transform((e) => [e]);

/**
 * A body is one event or an array of 1–100. Built once at import: the hot path only parses. The
 * shape picks the schema (rather than a union), so a refusal names the field that is wrong.
 */
export const beaconBody = {
  safeParse: (json: unknown) => (Array.isArray(json) ? beaconArray.safeParse(json) : oneEvent.safeParse(json)),
};
