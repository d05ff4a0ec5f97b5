import Router from '@koa/router';
import { cdnRoutes } from './cdn/routes';
import type { Deps } from './deps';
import { folderRoutes } from './folders/routes';
import { healthRoutes } from './health/routes';
import { keyRoutes } from './keys/routes';
import { playbackRoutes } from './playback/routes';
import { playerRoutes } from './player/routes';
import { storageRoutes } from './storage/routes';
import { tagRoutes } from './tags/routes';
import { fromUrlRoutes } from './upload/fromUrl';
import { uploadRoutes } from './upload/routes';
import { manageVideoRoutes } from './videos/manage';
import { videoRoutes } from './videos/routes';
import { webhookRoutes } from './webhooks/routes';

/** Key-less surfaces: health, local-storage uploads, CDN, player. */
export function publicRouter(deps: Deps): Router {
  const r = new Router();
  for (const mount of [healthRoutes, storageRoutes, cdnRoutes, playerRoutes]) mount(r, deps);
  return r;
}

/** Everything behind an API key. One resource, one folder. */
export function apiRouter(deps: Deps): Router {
  const r = new Router();
  for (const mount of [uploadRoutes, fromUrlRoutes, videoRoutes, manageVideoRoutes, folderRoutes, tagRoutes, keyRoutes, webhookRoutes, playbackRoutes]) mount(r, deps);
  return r;
}
