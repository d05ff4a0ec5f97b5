import type { IncomingMessage } from 'node:http';
import type Router from '@koa/router';
import { beaconBody, MAX_BEACON_BYTES, type BeaconEvent } from '../../lib/analytics/events';
import { beaconRows } from '../../lib/analytics/rows';
import type { Deps } from '../deps';
import type { Hot } from '../hot';
import { ApiError, badRequest } from '../errors';
import { retryAfter } from '../middleware/auth';
import { clientAddress } from '../middleware/client';
import { consumeWithin } from '../../lib/limits/local';

/** How long a beacon waits for the shared per-address budget before this process's own decides. */
const LIMIT_WAIT_MS = 250;

export const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type',
  'Access-Control-Max-Age': '86400',
};
// sendBeacon sends text/plain (a CORS-safelisted type: no preflight); fetch may send JSON.
export const TYPES = /^\s*(application\/json|text\/plain)\s*(;|$)/i;

const prematureClose = () => Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
const tooLarge = () => new ApiError(413, 'payload_too_large', `Beacons are at most ${MAX_BEACON_BYTES} bytes`);

/**
 * The body as text, at most MAX_BEACON_BYTES. Plain 'data'/'end' listeners rather than
 * `for await` over the request: the async iterator's machinery (end-of-stream, readable
 * wrappers) cost ≈ 30 µs a beacon (issue 36). Past the limit the request is destroyed, as the
 * iterator's early exit did.
 */
export function readBeaconBody(req: IncomingMessage): Promise<string> {
  if (Number(req.headers['content-length'] || 0) > MAX_BEACON_BYTES) return Promise.reject(tooLarge());
  // Already read, or already gone: no event will come for it.
  if (req.readableEnded) return Promise.resolve('');
  if (req.destroyed) return Promise.reject(prematureClose());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BEACON_BYTES) {
        done();
        req.destroy();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8'));
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    // The client went away before the end: what the iterator threw then.
    const onClose = () => onError(prematureClose());
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * SPEC §18 beacons. Only subjects the caller could play count: a public or unlisted video by id,
 * a private one only through a valid playback token for it, a live stream (`ls_…`) that is not
 * private (its id is the subject), resolved by lib/analytics/subjects.ts at a bounded cost. Whatever is not countable is dropped
 * silently — the answer is 204 for every well-formed body, so a beacon tells nothing about a
 * video. Each client address has `ANALYTICS_BEACONS_PER_MINUTE` requests a minute, then 429
 * `beacon_rate_limited`, checked before the body is read.
 */
export function beaconRoutes(r: Router, deps: Deps): void {
  const { hot } = deps;

  r.options('/beacons', (ctx) => {
    ctx.set(CORS);
    ctx.status = 204;
  });

  r.post('/beacons', async (ctx) => {
    ctx.set(CORS);
    // The fast path (api/analytics/fast.ts) passes on a body it has read, its limit spent.
    const pre = preRead.get(ctx.req);
    if (!pre) {
      // The shared budget's answer if it comes at once, else this process's (a busy database
      // must not hold a beacon: issue 45).
      const limit = await consumeWithin(hot.beaconLimit, hot.beaconLimitLocal, clientAddress(ctx), LIMIT_WAIT_MS);
      if (!limit.allowed) {
        throw new ApiError(429, 'beacon_rate_limited', 'Too many beacons from this address; retry later', undefined, { 'Retry-After': String(retryAfter(limit.resetAt)) });
      }
      // The body must say what it is (docs/analytics.md): none, or another type, is 415.
      if (!TYPES.test(ctx.get('content-type'))) throw new ApiError(415, 'unsupported_content_type', 'Beacons are JSON, sent as application/json or text/plain');
    } else if ('error' in pre) throw pre.error;
    const text = pre ? pre.text : await readBeaconBody(ctx.req);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw badRequest('invalid_json', 'The beacon body is not valid JSON');
    }
    const parsed = beaconBody.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, 5).map((i) => ({ path: i.path.join('.'), message: i.message }));
      throw badRequest('invalid_beacon', 'The beacon is not a valid event or array of 1–100 events', issues);
    }
    acceptBeacons(hot, parsed.data, ctx.get('user-agent'), clientAddress(ctx));
    ctx.status = 204;
  });
}

/**
 * Bodies the fast path read before handing the request to this route (a body it was not sure
 * of, or a failure to answer with the route's own error), with the beacon limit already spent.
 */
export const preRead = new WeakMap<IncomingMessage, { text: string } | { error: unknown }>();

/**
 * Takes a body's countable events: their raw rows go to the buffer now when everything they need
 * is in memory (the subjects' access decisions, the day's salt: the common case), else the body
 * waits in the buffer and its rows are made at the next flush (lib/analytics/rows.ts). Either way
 * the beacon is answered without waiting on the database: under load a busy pool made beacons
 * wait, fail and be given up by their players (issue 45). Events whose subject is not countable
 * are dropped. The client address (X-Forwarded-For only through TRUSTED_PROXIES) is used for the
 * viewer hash and the country only, never stored.
 */
export function acceptBeacons(hot: Hot, events: BeaconEvent[], ua: string, address: string, receivedAt = new Date()): void {
  const body = { events, ua, address, receivedAt };
  const resolved = hot.beaconSubjects.fromMemory(events.map((e) => e.subject), receivedAt.getTime());
  const salt = hot.salt.peek(receivedAt.getTime());
  if (resolved && (salt || !events.some((e) => e.event === 'viewstart'))) {
    const rows = beaconRows(body, resolved, salt);
    if (rows.length) hot.beacons.push(rows);
  } else hot.beacons.defer(body);
}
