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

// The hot path's check (issue 36: zod cost ≈ 60 µs of a 5-event request's CPU). It accepts only
// bodies zod accepts, and returns what zod would: every field `beaconEvent` knows, checked the same
// way, in the schema's key order, unknown fields dropped. Anything it is not sure of — a wrong type,
// a value out of range, a null where only absence is allowed — answers undefined and the body goes
// to zod, which decides and words the refusal. test/analytics/events.test.ts runs both over
// generated valid and hostile bodies and compares.
const EVENT_SET: ReadonlySet<unknown> = new Set(EVENT_NAMES);
/** zod's `z.uuid()` pattern (zod/v4/core/regexes.ts), copied: the tests compare the two checks. */
const UUID = /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/;
const NO = Symbol('no');
type Out = Record<string, unknown>;

const isRecord = (v: unknown): v is Out => typeof v === 'object' && v !== null && !Array.isArray(v);
const okText = (v: unknown, max: number, min = 0): v is string => typeof v === 'string' && v.length >= min && v.length <= max && storableText(v);
const okInt = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
const okNum = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && v >= min && v <= max; // NaN/±Infinity fail the bounds

/** A nullish field: absent stays absent, null stays null, else it must pass `ok`. */
function nullish(out: Out, e: Out, key: string, ok: (v: unknown) => boolean): boolean {
  if (!(key in e)) return true;
  const v = e[key];
  if (v === undefined || v === null || ok(v)) {
    out[key] = v;
    return true;
  }
  return false;
}

function fastEvent(e: unknown): Out | typeof NO {
  if (!isRecord(e)) return NO;
  const { view_id, seq, subject, event, position, player } = e;
  if (typeof view_id !== 'string' || !UUID.test(view_id)) return NO;
  if (!okInt(seq, 0, INT32) || !okText(subject, 2048, 1) || !EVENT_SET.has(event) || !okNum(position, 0, 1e7)) return NO;
  const out: Out = { view_id, seq, subject, event, position };
  if (
    !nullish(out, e, 'rendition', (v) => okText(v, 32)) ||
    !nullish(out, e, 'bitrate', (v) => okInt(v, 0, INT32)) ||
    !nullish(out, e, 'error_code', (v) => okText(v, 100)) ||
    !nullish(out, e, 'elapsed_ms', (v) => okInt(v, 0, INT32)) ||
    !nullish(out, e, 'watch_ms', (v) => okInt(v, 0, INT32))
  ) {
    return NO;
  }
  if (!isRecord(player) || !okText(player.name, 50)) return NO;
  if ('version' in player && player.version !== undefined && !okText(player.version, 50)) return NO;
  out.player = 'version' in player ? { name: player.name, version: player.version } : { name: player.name };
  if (!nullish(out, e, 'player_height', (v) => okInt(v, 1, 16384)) || !nullish(out, e, 'latency', (v) => okNum(v, 0, 3600))) return NO;
  const { watch_ms: w, elapsed_ms: el } = out;
  if (w != null && el != null && (w as number) > (el as number) + 1000) return NO;
  return out;
}

/** The body's events when the hand-written check is sure zod would accept it; undefined otherwise. */
export function fastBeaconBody(json: unknown): BeaconEvent[] | undefined {
  if (!Array.isArray(json)) {
    const one = fastEvent(json);
    return one === NO ? undefined : [one as BeaconEvent];
  }
  if (json.length < 1 || json.length > MAX_BEACON_EVENTS) return undefined;
  const out: BeaconEvent[] = new Array(json.length);
  for (let i = 0; i < json.length; i++) {
    const one = fastEvent(json[i]);
    if (one === NO) return undefined;
    out[i] = one as BeaconEvent;
  }
  return out;
}

/** What zod alone answers for a body (the reference the fast check is tested against). */
export const zodBeaconBody = {
  safeParse: (json: unknown) => (Array.isArray(json) ? beaconArray.safeParse(json) : oneEvent.safeParse(json)),
};

/**
 * A body is one event or an array of 1–100. Built once at import: the hot path only parses. The
 * shape picks the schema (rather than a union), so a refusal names the field that is wrong. The
 * common shape is checked by hand first (`fastBeaconBody`); what it does not accept, zod decides.
 */
export const beaconBody = {
  safeParse: (json: unknown): { success: true; data: BeaconEvent[]; error?: undefined } | ReturnType<typeof zodBeaconBody.safeParse> => {
    const data = fastBeaconBody(json);
    return data ? { success: true, data } : zodBeaconBody.safeParse(json);
  },
};
