import assert from 'node:assert/strict';
import { beaconBody, EVENT_NAMES, fastBeaconBody, MAX_BEACON_EVENTS, zodBeaconBody } from '../../lib/analytics/events';

// The hand-written check of the beacon body (issue 36) must accept exactly what zod accepts — it
// may pass a body on to zod, never accept one zod refuses — and answer the same events.

/** mulberry32: a seeded generator, so a failure is the same failure on every run. */
function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const INT32 = 2 ** 31 - 1;
const ABSENT = Symbol('absent');
const str = (n: number, c = 'a') => c.repeat(n);
const UUIDS = [
  '0f8fad5b-d9cb-469f-a165-70867728950e',
  '0F8FAD5B-D9CB-469F-A165-70867728950E',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '0f8fad5b-d9cb-069f-a165-70867728950e',
  '0f8fad5b-d9cb-969f-a165-70867728950e',
  '0f8fad5b-d9cb-469f-c165-70867728950e',
  '0f8fad5b-d9cb-869f-b165-70867728950e',
  '0f8fad5bd9cb469fa16570867728950e',
  ' 0f8fad5b-d9cb-469f-a165-70867728950e',
  '0f8fad5b-d9cb-469f-a165-70867728950e\n',
  '0f8fad5b-d9cb-469f-a165-70867728950g',
  '0f8fad5b-d9cb-469f-a165-70867728950e0',
];
const TEXTS = ['', 'a', '720p', str(31), str(32), str(33), str(49), str(50), str(51), str(99), str(100), str(101), str(2048), str(2049), 'a\u0000b', '\u0000', 'x\ud800', '\udc00x', '\ud83d\ude00', str(16, '\ud83d\ude00'), str(25, '\ud83d\ude00'), str(26, '\ud83d\ude00'), 'é', 'ls_abc', 'vid_abcdefghijklmnopqrstuv'];
const NUMBERS = [0, -0, 1, -1, 0.5, 1.5, 999, 1000, 1001, 3600, 3600.5, 3601, 16384, 16385, 1e7, 1e7 + 0.5, 1e7 + 1, INT32, INT32 + 1, 2 ** 53, -INT32, NaN, Infinity, -Infinity];
const OTHERS = [null, true, false, {}, [], '5', '0', [1], { name: 'x' }];
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

/** A value for a field: mostly good ones for its kind, often a hostile one of any kind. */
function value(r: () => number, good: readonly unknown[]): unknown {
  const x = r();
  if (x < 0.55) return pick(r, good);
  if (x < 0.7) return pick(r, NUMBERS);
  if (x < 0.85) return pick(r, TEXTS);
  if (x < 0.92) return pick(r, OTHERS);
  return ABSENT;
}

function player(r: () => number): unknown {
  const x = r();
  if (x < 0.1) return pick(r, [...OTHERS, ...TEXTS.slice(0, 3), ABSENT]);
  const p: Record<string, unknown> = {};
  const name = r() < 0.8 ? pick(r, ['bench', 'hls.js', '', str(50)]) : value(r, TEXTS);
  if (name !== ABSENT) p.name = name;
  const v = r();
  if (v < 0.4) p.version = pick(r, ['1', '1.5.20', str(50)]);
  else if (v < 0.6) p.version = value(r, TEXTS);
  if (r() < 0.1) p.extra = 'ignored';
  return p;
}

/** One event: each field present (mostly valid), absent, null or hostile; unknown fields sometimes. */
function event(r: () => number, hostility: number): Record<string, unknown> {
  const good = r() > hostility;
  const f = (ok: readonly unknown[], optional = false): unknown => {
    if (good) return optional && r() < 0.3 ? pick(r, [ABSENT, null]) : pick(r, ok);
    return value(r, optional ? [...ok, null, ABSENT] : ok);
  };
  const elapsed = f([0, 1000, 10000, 60000, INT32], true);
  const e: Record<string, unknown> = {
    view_id: f(UUIDS.slice(0, 5)),
    seq: f([0, 1, 2, 99, INT32]),
    subject: f(['vid_abcdefghijklmnopqrstuv', 'ls_abc', str(2048), 'a', '\ud83d\ude00']),
    event: f([...EVENT_NAMES, ...(good ? [] : ['VIEWSTART', 'toString', '__proto__', ''])]),
    position: f([0, 1.5, 10, 1e7, 0.001]),
    rendition: f(['720p', '', str(32)], true),
    bitrate: f([0, 2500000, INT32], true),
    error_code: f(['MEDIA_ERR_DECODE', str(100)], true),
    elapsed_ms: elapsed,
    watch_ms: typeof elapsed === 'number' && r() < 0.5 ? elapsed + pick(r, [-1, 0, 999, 1000, 1001, 5000]) : f([0, 9000, INT32], true),
    player: good ? (r() < 0.9 ? { name: 'bench', version: '1' } : player(r)) : player(r),
    player_height: f([1, 720, 2160, 16384], true),
    latency: f([0, 0.5, 3.25, 3600], true),
  };
  if (r() < 0.15) e.unknown_field = pick(r, [1, 'x', null, { nested: true }]);
  for (const k of Object.keys(e)) if (e[k] === ABSENT) delete e[k];
  return e;
}

/** A body as JSON.parse would hand it over (keys in random order, `__proto__` as an own key sometimes). */
function body(r: () => number): unknown {
  const hostility = pick(r, [0, 0, 0.05, 0.2, 0.6]);
  const x = r();
  let json: unknown;
  if (x < 0.03) json = pick(r, [null, 5, 'text', true, {}, [], 0]);
  else if (x < 0.4) json = event(r, hostility);
  else {
    const n = pick(r, [1, 2, 5, 5, 10, MAX_BEACON_EVENTS, MAX_BEACON_EVENTS + 1, 0]);
    json = Array.from({ length: n }, () => event(r, hostility));
  }
  let text = JSON.stringify(json);
  if (r() < 0.05 && text.startsWith('{"')) text = `{"__proto__":{"view_id":1},${text.slice(1)}`;
  const parsed = JSON.parse(text) as unknown;
  // Values JSON.stringify cannot write but JSON.parse can produce (1e400 is Infinity), put back.
  if (r() < 0.05 && parsed && typeof parsed === 'object' && !Array.isArray(parsed)) (parsed as Record<string, unknown>).position = pick(r, [Infinity, -Infinity, NaN]);
  return parsed;
}

function compare(json: unknown): 'accepted' | 'refused' {
  const zod = zodBeaconBody.safeParse(json);
  const fast = fastBeaconBody(json);
  if (fast !== undefined) {
    assert.ok(zod.success, `the fast check accepted a body zod refuses: ${JSON.stringify(json)} (${JSON.stringify(zod.error?.issues)})`);
    assert.deepStrictEqual(fast, zod.data);
    assert.equal(JSON.stringify(fast), JSON.stringify(zod.data), 'same keys in the same order');
  }
  const both = beaconBody.safeParse(json);
  assert.equal(both.success, zod.success, `beaconBody and zod disagree on ${JSON.stringify(json)}`);
  if (zod.success) assert.deepStrictEqual(both.data, zod.data);
  else assert.deepStrictEqual(both.error?.issues, zod.error.issues, 'a refusal is zod’s, word for word');
  return zod.success ? 'accepted' : 'refused';
}

describe('beacon body: the hand-written check against zod', () => {
  it('takes the common shape without zod (the SDK’s and the bench’s bodies)', () => {
    const names = ['viewstart', 'playing', 'heartbeat', 'heartbeat', 'viewend'];
    const evs = names.map((event, seq) => ({ view_id: UUIDS[0], seq, subject: 'vid_abcdefghijklmnopqrstuv', event, position: seq * 10, elapsed_ms: seq * 10000, watch_ms: seq * 9000, rendition: '720p', bitrate: 2500000, player: { name: 'bench', version: '1' } }));
    const fast = fastBeaconBody(JSON.parse(JSON.stringify(evs)));
    assert.ok(fast, 'the fast check accepts the common body');
    assert.deepStrictEqual(fast, zodBeaconBody.safeParse(evs).data);
    assert.deepStrictEqual(fastBeaconBody(evs[0]), [evs[0]], 'one event is an array of one');
  });

  it('accepts and refuses the same bodies as zod, with the same events, over generated valid and hostile bodies', () => {
    const r = rng(36);
    const seen = { accepted: 0, refused: 0, fast: 0 };
    for (let i = 0; i < 6000; i++) {
      const json = body(r);
      seen[compare(json)]++;
      if (fastBeaconBody(json)) seen.fast++;
    }
    // The generator must reach both sides, and the fast path must carry most accepted bodies.
    assert.ok(seen.accepted > 1000 && seen.refused > 1000, JSON.stringify(seen));
    assert.ok(seen.fast > seen.accepted * 0.9, JSON.stringify(seen));
  });

  it('agrees on each single hostile value of each field', () => {
    const base = { view_id: UUIDS[0], seq: 1, subject: 'vid_x', event: 'playing', position: 1, rendition: '720p', bitrate: 1, error_code: 'E', elapsed_ms: 5000, watch_ms: 4000, player: { name: 'p', version: '1' }, player_height: 720, latency: 1 };
    const pool = [...UUIDS, ...TEXTS, ...NUMBERS, ...OTHERS, ...EVENT_NAMES, 'VIEWSTART', '__proto__', { name: 'p', version: null }, { name: 'p', version: 5 }, { version: '1' }, { name: str(51) }];
    let n = 0;
    for (const key of Object.keys(base)) {
      for (const v of pool) {
        compare({ ...base, [key]: v });
        compare([base, { ...base, [key]: v }]);
        n += 2;
      }
      const without: Record<string, unknown> = { ...base };
      delete without[key];
      compare(without);
    }
    assert.ok(n > 1000);
  });
});
