import { z } from 'zod';

/** SPEC §18 event names. */
export const EVENT_NAMES = ['viewstart', 'playing', 'pause', 'seeked', 'rebufferstart', 'rebufferend', 'rendition', 'error', 'heartbeat', 'ended', 'viewend'] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export const MAX_BEACON_BYTES = 16 * 1024;
export const MAX_BEACON_EVENTS = 100;

const INT32 = 2 ** 31 - 1;
const short = (max: number) => z.string().max(max);

/**
 * One event. Unknown fields are dropped (newer senders stay welcome). Beyond SPEC's fields, two
 * optional counters from the player's own clock make durations exact whatever the network did:
 * `elapsed_ms` (since the view began) and `watch_ms` (playback time so far, cumulative).
 */
export const beaconEvent = z.object({
  view_id: z.uuid(),
  seq: z.number().int().min(0).max(INT32),
  subject: z.string().min(1).max(2048),
  event: z.enum(EVENT_NAMES),
  position: z.number().min(0).max(1e7),
  rendition: short(32).nullish(),
  bitrate: z.number().int().min(0).max(INT32).nullish(),
  error_code: short(100).nullish(),
  elapsed_ms: z.number().int().min(0).max(INT32).nullish(),
  watch_ms: z.number().int().min(0).max(INT32).nullish(),
  player: z.object({ name: short(50), version: short(50).optional() }),
});
export type BeaconEvent = z.infer<typeof beaconEvent>;

/** A body is one event or an array of 1–100. Built once at import: the hot path only parses. */
export const beaconBody = z.union([beaconEvent.transform((e) => [e]), z.array(beaconEvent).min(1).max(MAX_BEACON_EVENTS)]);
