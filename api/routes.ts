import Router from '@koa/router';
import { analyticsRoutes } from './analytics/routes';
import { beaconRoutes } from './analytics/beacons';
import { sdkRoutes } from './analytics/sdk';
import { audioTrackRoutes } from './audio/routes';
import { captionRoutes } from './captions/routes';
import { cdnRoutes } from './cdn/routes';
import { dashboardRoutes } from './dashboard/routes';
import { clipRoutes } from './clips/routes';
import type { Deps } from './deps';
import { encodingRoutes } from './encoding/routes';
import { folderRoutes } from './folders/routes';
import { healthRoutes } from './health/routes';
import { keyRoutes } from './keys/routes';
import { liveRoutes } from './live/routes';
import { openapiRoutes } from './openapi/routes';
import { playbackRoutes } from './playback/routes';
import { playerRoutes } from './player/routes';
import { restrictionRoutes } from './restrictions/routes';
import { indexByFirstSegment } from './routeIndex';
import { sessionRoutes } from './session/routes';
import { storageRoutes } from './storage/routes';
import { tagRoutes } from './tags/routes';
import { tusRoutes } from './tus/routes';
import { usageRoutes } from './usage/routes';
import { fromUrlRoutes } from './upload/fromUrl';
import { uploadRoutes } from './upload/routes';
import { manageVideoRoutes } from './videos/manage';
import { videoRoutes } from './videos/routes';
import { watermarkRoutes } from './watermarks/routes';
import { webhookRoutes } from './webhooks/routes';

/** Key-less surfaces: health, the API document and reference, local-storage uploads, tus (its POST checks the key itself: raw body), CDN, player, the dashboard's files, analytics beacons and the analytics SDK. */
export function publicRouter(deps: Deps): Router {
  const r = new Router();
  for (const mount of [healthRoutes, openapiRoutes, storageRoutes, tusRoutes, cdnRoutes, playerRoutes, dashboardRoutes, beaconRoutes, sdkRoutes]) mount(r, deps);
  return indexByFirstSegment(r);
}

/** Everything behind an API key. One resource, one folder. */
export function apiRouter(deps: Deps): Router {
  const r = new Router();
  for (const mount of [uploadRoutes, fromUrlRoutes, videoRoutes, manageVideoRoutes, folderRoutes, tagRoutes, keyRoutes, webhookRoutes, playbackRoutes, usageRoutes, captionRoutes, clipRoutes, audioTrackRoutes, restrictionRoutes, watermarkRoutes, encodingRoutes, liveRoutes, analyticsRoutes]) mount(r, deps);
  return indexByFirstSegment(r);
}

/** The dashboard's sign-in, sign-out, who-am-I and workspace switch (SPEC §15); cookie, no key. */
export function sessionRouter(deps: Deps): Router {
  const r = new Router();
  sessionRoutes(r, deps);
  return indexByFirstSegment(r);
}
