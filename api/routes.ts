import Router from '@koa/router';
import type { Deps } from './deps';
import { healthRoutes } from './health/routes';
import { storageRoutes } from './storage/routes';
import { uploadRoutes } from './upload/routes';
import { videoRoutes } from './videos/routes';

/** Key-less surfaces: health, local-storage uploads, CDN, player. */
export function publicRouter(deps: Deps): Router {
  const r = new Router();
  for (const mount of [healthRoutes, storageRoutes]) mount(r, deps);
  return r;
}

/** Everything behind an API key. One resource, one folder. */
export function apiRouter(deps: Deps): Router {
  const r = new Router();
  for (const mount of [uploadRoutes, videoRoutes]) mount(r, deps);
  return r;
}
