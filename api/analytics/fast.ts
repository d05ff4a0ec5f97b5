import type { IncomingMessage, ServerResponse } from 'node:http';
import type Router from '@koa/router';
import { fastBeaconBody, MAX_BEACON_BYTES } from '../../lib/analytics/events';
import { httpDuration } from '../../lib/metrics/registry';
import { clientAddressOf, TrustedProxies } from '../../lib/net/proxies';
import type { Deps } from '../deps';
import { reachesOnly } from '../routeIndex';
import { logRequest, newRequestId } from '../middleware/request';
import { acceptBeacons, CORS, preRead, readBeaconBody, TYPES } from './beacons';

const PATHS = new Set(['/v1/beacons', '/beacons', '/api/v1/beacons']);
const CORS_HEADERS = Object.entries(CORS);

/**
 * True when `POST /beacons` reaches the beacon route alone in the Koa chain: no public or
 * session route in front of it (test/hot/beacon-fast.test.ts fails if this is off in the app).
 */
export function fastBeaconRoute(routers: { before: Router[] }): boolean {
  const [pub, ...rest] = routers.before;
  return reachesOnly(rest, pub, 'POST', '/beacons', '/beacons');
}

/**
 * `POST /v1/beacons` answered before Koa when it is the common case: a JSON body the hand check
 * accepts (lib/analytics/events.ts), its address within its beacon limit by a token this process
 * already holds (lib/limits/lease.ts). Returns false before reading anything otherwise (Redis
 * limits, no lease, out of tokens, an unknown type, an oversized length, a query string): the Koa
 * route answers. Once the body is read, whatever this path is not sure of — invalid JSON, a body
 * zod must judge — is handed to the Koa route with the body (`preRead`, the limit already spent),
 * so errors keep the route's codes and shapes. Accepting never waits on the database (subjects
 * not in memory are resolved at the buffer's next flush: `acceptBeacons`).
 *
 * Why: a beacon is small work (parse, a map lookup, a hash), and Koa's ~20 middleware around it
 * cost as much again (issue 36: ingest must hold ≥ 0.5× `/healthz`). The answer is the route's,
 * header for header (test/hot/beacon-fast.test.ts): request id, CORS, 204; it is counted under the
 * route's template in the request metrics and logged at info as Koa logs it.
 */
export function beaconFastPath(
  deps: Deps,
  routers: { before: Router[] },
): (req: IncomingMessage, res: ServerResponse, koa: (req: IncomingMessage, res: ServerResponse) => Promise<void>) => boolean {
  const { hot, log } = deps;
  const limiter = hot.beaconLimit;
  if (!limiter.consumeNow || !fastBeaconRoute(routers)) return () => false;
  const consumeNow = limiter.consumeNow.bind(limiter);
  const trusted = new TrustedProxies(deps.config.trustedProxies ?? []);

  return (req, res, koa) => {
    if (req.method !== 'POST' || !PATHS.has(req.url ?? '')) return false;
    const type = req.headers['content-type'];
    if (!type || !TYPES.test(type)) return false;
    if (Number(req.headers['content-length'] || 0) > MAX_BEACON_BYTES) return false;
    // As middleware/client.ts decides it for Koa (TRUSTED_PROXIES).
    const address = clientAddressOf(req.socket.remoteAddress, req.headers['x-forwarded-for'], trusted);
    // Last, since it spends: from here on this path owns the request.
    const decision = consumeNow(address);
    if (!decision?.allowed) return false;

    const end = httpDuration.startTimer();
    const started = log.isLevelEnabled('info') ? process.hrtime.bigint() : 0n;
    const toKoa = (pre: { text: string } | { error: unknown }) => {
      preRead.set(req, pre);
      void koa(req, res);
    };
    readBeaconBody(req)
      .then(
        (text) => {
          let events;
          try {
            events = fastBeaconBody(JSON.parse(text));
          } catch {
            events = undefined;
          }
          if (!events) return toKoa({ text });
          acceptBeacons(hot, events, req.headers['user-agent'] ?? '', address);
          const requestId = newRequestId();
          res.setHeader('X-Request-Id', requestId);
          for (const [name, value] of CORS_HEADERS) res.setHeader(name, value);
          res.statusCode = 204;
          res.end();
          end({ method: 'POST', route: '/beacons', status: '204' });
          if (started) logRequest(log.child({ req: requestId }), 'POST', req.url!, 204, started);
        },
        (error: unknown) => toKoa({ error }),
      )
      .catch((err: unknown) => {
        // Nothing above should throw; if something does, the request still ends and the process lives.
        log.error({ err }, 'beacon fast path failed');
        if (!res.headersSent) {
          res.statusCode = 500;
          res.end();
        }
      });
    return true;
  };
}
