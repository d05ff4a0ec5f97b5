import type { IncomingMessage, ServerResponse } from 'node:http';
import type Router from '@koa/router';
import { parseVideoId } from '../../lib/ids';
import { httpDuration } from '../../lib/metrics/registry';
import type { Deps } from '../deps';
import { reachesOnly } from '../routeIndex';
import { keyOfHeaders } from '../middleware/auth';
import type { TouchLastUsed } from '../middleware/lastUsed';
import { rateLimitHeaders } from '../middleware/rateLimit';
import { logRequest, newRequestId } from '../middleware/request';

/** What Koa sends for `ctx.type = 'application/json'` (api/videos/routes.ts). */
const JSON_TYPE = 'application/json; charset=utf-8';
/** Characters on which parseurl (Koa's reading of path and query) falls back to url.parse: left to Koa. */
const UNUSUAL = /[\t\n\f\r #\u00a0\ufeff]/;
const SAMPLE_ID = 'vid_0123456789abcdef0123456789abcdef';

type Route = '/videos/:id' | '/videos';

/** The two reads answered here, by the route template Koa's metrics know them by, and their read-cache key. */
function targetOf(url: string): { route: Route; key: string } | undefined {
  if (UNUSUAL.test(url)) return undefined;
  const q = url.indexOf('?');
  let path = q < 0 ? url : url.slice(0, q);
  // The prefixes middleware/request.ts's versionPrefixes strips.
  if (path.startsWith('/v1/')) path = path.slice(3);
  else if (path.startsWith('/api/v1/')) path = path.slice(7);
  // The list's cache key is its query string as Koa reads it (ctx.querystring).
  if (path === '/videos') return { route: '/videos', key: `list?${q < 0 ? '' : url.slice(q + 1)}` };
  if (q >= 0 || !path.startsWith('/videos/')) return undefined;
  // Strict: `vid_<32 hex>` or a UUID, so no slash and no percent-encoding (which the router would decode).
  const uuid = parseVideoId(path.slice('/videos/'.length));
  return uuid ? { route: '/videos/:id', key: uuid } : undefined;
}

/**
 * The routes this path may answer: those the Koa chain would send to one layer alone, the API
 * router's route of that template, with no public or session route and no router middleware on
 * the way that this path would skip. A route added in front of them turns the fast path off for
 * it (test/unit/video-fast.test.ts); test/hot/video-fast.test.ts fails if either is off in the
 * real app.
 */
export function fastReadRoutes(routers: { before: Router[]; api: Router }): Set<Route> {
  const alone = (path: string, route: Route) => reachesOnly(routers.before, routers.api, 'GET', path, route);
  const on = new Set<Route>();
  if (alone(`/videos/${SAMPLE_ID}`, '/videos/:id')) on.add('/videos/:id');
  if (alone('/videos', '/videos')) on.add('/videos');
  return on;
}

const header = (v: string | string[] | undefined) => (typeof v === 'string' ? v : '');

/**
 * `GET /v1/videos/{id}` and `GET /v1/videos?…` answered before Koa when everything they need is
 * already in this process's memory: the key's identity (lib/keyCache.ts), the answer's bytes
 * (lib/videos/readCache.ts, per workspace) and a rate-limit token this process holds
 * (lib/limits/lease.ts). Anything else returns false before any side effect and takes the Koa
 * chain, which also fills those caches: no key, a wrong or uncached key, a session cookie, a miss,
 * a video still processing (never cached), a HEAD, an unusual or percent-encoded target, Redis
 * limits (every decision is a round trip), a key out of tokens or refused (429 from Koa).
 *
 * Why: a cached read costs a map lookup, but Koa's ~20 middleware around it cost ~40 µs a request
 * (docs/performance.md, issue 33). What the chain does for such a request is done here, by the
 * same functions: the key read from the same headers (`keyOfHeaders`), the workspace from the
 * key (another workspace's key looks up its own entries: isolation is the cache key), the limiter
 * spends the token and its headers are sent, `last_used_at` is touched, and the answer is counted
 * in the request metrics under the route's template and logged at info as Koa logs it. Freshness
 * is the cache's own: a write drops its workspace's entries before it answers, and other
 * processes drop them when the trigger's notification lands, so `peek` never returns what `get`
 * would not. The answer is Koa's header for header (test/hot/video-fast.test.ts).
 */
export function videoReadFastPath(
  deps: Deps,
  opts: { touch: TouchLastUsed; routers: { before: Router[]; api: Router } },
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { keys, reads, perKey } = deps.hot;
  const routes = fastReadRoutes(opts.routers);
  if (!perKey.consumeNow || routes.size === 0) return () => false;
  const consumeNow = perKey.consumeNow.bind(perKey);
  const log = deps.log;

  return (req, res) => {
    if (req.method !== 'GET') return false;
    const url = req.url ?? '';
    const target = targetOf(url);
    if (!target || !routes.has(target.route)) return false;
    const presented = keyOfHeaders(header(req.headers.authorization), header(req.headers['x-api-key']));
    if (!('key' in presented) || !presented.key) return false;
    const identity = keys.peek(presented.key);
    if (!identity) return false;
    const body = reads.peek(identity.workspaceId, target.key);
    if (!body) return false;
    // Last, since it spends: from here on this path answers.
    const decision = consumeNow(identity.keyId);
    if (!decision) return false;

    const end = httpDuration.startTimer();
    const started = log.isLevelEnabled('info') ? process.hrtime.bigint() : 0n;
    const requestId = newRequestId();
    const as = { req: requestId, key: identity.keyId, ws: identity.workspaceId };
    opts.touch(identity.keyId, (err) => log.warn({ ...as, err }, 'last_used_at update failed'));
    res.setHeader('X-Request-Id', requestId);
    for (const [name, value] of rateLimitHeaders(decision)) res.setHeader(name, value);
    res.setHeader('Content-Type', JSON_TYPE);
    res.setHeader('Content-Length', body.length);
    res.statusCode = 200;
    res.end(body);
    end({ method: 'GET', route: target.route, status: '200' });
    if (started) logRequest(log.child(as), 'GET', url, 200, started);
    return true;
  };
}
