import type { IncomingMessage, ServerResponse } from 'node:http';
import Koa from 'koa';
import type { BaseDeps, Deps } from './deps';
import { beaconFastPath } from './analytics/fast';
import { cdnFastPath } from './cdn/fast';
import { createHot, type Hot } from './hot';
import { authenticate, requireScope } from './middleware/auth';
import { jsonBody } from './middleware/body';
import { clientMiddleware } from './middleware/client';
import { knownMethods } from './middleware/methods';
import { cancelQueriesOnClose } from './middleware/cancel';
import { errorMiddleware } from './middleware/errors';
import { idempotency } from './middleware/idempotency';
import { requestMetrics } from './metrics/middleware';
import { requestContext, versionPrefixes } from './middleware/request';
import { rateLimit } from './middleware/rateLimit';
import { noNulInQuery } from './middleware/validate';
import { dropReadsOnWrite } from './middleware/reads';
import { lastUsedWriter, touchLastUsed } from './middleware/lastUsed';
import { sessionAuth } from './middleware/session';
import { apiRouter, publicRouter, sessionRouter } from './routes';
import { videoReadFastPath } from './videos/fast';

/** The Koa app plus `close`, which flushes and releases what the hot paths hold (call on shutdown). */
export type App = Koa & { hot: Hot; close(): Promise<void> };

export function createApp(base: BaseDeps & { hot?: Hot }): App {
  const hot = base.hot ?? createHot(base);
  const deps: Deps = { ...base, hot };
  const app = new Koa();
  // Forwarding headers are believed only from TRUSTED_PROXIES (middleware/client.ts).
  app.proxy = false;
  app.use(clientMiddleware(deps.config.trustedProxies));
  app.use(requestContext(deps.log));
  app.use(requestMetrics);
  app.use(errorMiddleware);
  app.use(cancelQueriesOnClose(deps.db));
  app.use(versionPrefixes);
  app.use(noNulInQuery);
  const pub = publicRouter(deps);
  const api = apiRouter(deps);
  const session = sessionRouter(deps);
  app.use(knownMethods([pub, session, api]));
  app.use(pub.routes());
  app.use(pub.allowedMethods());
  app.use(jsonBody(deps.config.bodyLimitBytes));
  app.use(session.routes());
  app.use(sessionAuth(deps.db, deps.config.publicBaseUrl));
  app.use(authenticate(hot));
  app.use(dropReadsOnWrite(hot.reads));
  const touch = lastUsedWriter(deps.db);
  app.use(touchLastUsed(touch));
  app.use(requireScope);
  app.use(rateLimit(hot.perKey));
  app.use(idempotency(deps.db));
  app.use(api.routes());
  app.use(api.allowedMethods());
  // Segments and playlists (api/cdn/fast.ts), keyed video reads (api/videos/fast.ts) whose
  // answers are already in memory and common analytics beacons (api/analytics/fast.ts) are
  // answered before Koa; the rest goes through it.
  const cdn = cdnFastPath(deps);
  const reads = videoReadFastPath(deps, { touch, routers: { before: [pub, session], api } });
  const beacons = beaconFastPath(deps, { before: [pub, session] });
  const koaCallback = app.callback.bind(app);
  app.callback = () => {
    const handle = koaCallback();
    return (req, res) => {
      const [q, s] = [req as IncomingMessage, res as ServerResponse];
      return cdn(q, s) || reads(q, s) || beacons(q, s, handle) ? Promise.resolve() : handle(req, res);
    };
  };
  return Object.assign(app, { hot, close: () => hot.close() });
}
