import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import { ROOT } from '../../lib/root';
import type { Deps } from '../deps';

/** The sender script's source (also a player asset: the embed player uses the same file). */
export const SDK_FILE = path.join(ROOT, 'sdk', 'analytics.js');

/** `GET /sdk/analytics.js`: for pages with their own player (hls.js, video.js, Shaka). */
export function sdkRoutes(r: Router, _deps: Deps): void {
  const body = fs.readFileSync(SDK_FILE);
  const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
  r.get('/sdk/analytics.js', (ctx) => {
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('ETag', etag);
    if (ctx.get('if-none-match') === etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.body = body;
  });
}
