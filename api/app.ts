import Koa from 'koa';
import type { Deps } from './deps';
import { authenticate, requireScope } from './middleware/auth';
import { jsonBody } from './middleware/body';
import { errorMiddleware } from './middleware/errors';
import { requestContext, versionPrefixes } from './middleware/request';
import { rateLimit } from './middleware/rateLimit';
import { apiRouter, publicRouter } from './routes';

export function createApp(deps: Deps): Koa {
  const app = new Koa();
  app.proxy = true;
  app.use(requestContext(deps.log));
  app.use(errorMiddleware);
  app.use(versionPrefixes);
  const pub = publicRouter(deps);
  app.use(pub.routes());
  app.use(pub.allowedMethods());
  app.use(jsonBody(deps.config.bodyLimitBytes));
  app.use(authenticate(deps.db));
  app.use(requireScope);
  app.use(rateLimit(deps.db, deps.config.rateLimitPerMinute));
  const api = apiRouter(deps);
  app.use(api.routes());
  app.use(api.allowedMethods());
  return app;
}
