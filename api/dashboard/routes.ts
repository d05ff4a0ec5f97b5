import fs from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { DASHBOARD_DIST } from '../../lib/dashboard/build';
import type { Deps } from '../deps';
import { ApiError, notFound } from '../errors';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

// Scripts only from this origin (an injected <script> cannot run); never framed by another site.
const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  'img-src * data: blob:',
  'media-src * blob:',
  'connect-src *',
  'frame-src *',
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

function sendIndex(ctx: ParameterizedContext): void {
  const file = path.join(DASHBOARD_DIST, 'index.html');
  if (!fs.existsSync(file)) throw new ApiError(503, 'dashboard_not_built', 'The dashboard is not built; run `npm run build:dashboard` (scripts/start does it)');
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = fs.createReadStream(file);
}

/**
 * The site's icon: a play triangle on the brand blue. Browsers ask every page of the origin for
 * /favicon.ico (the dashboard, the embed player); without it each page logged a 401 (issue 49).
 */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0b57d0"/><path d="M12 9v14l11-7z" fill="#fff"/></svg>';

/** The dashboard's files: hashed assets cached for a year, the page itself revalidated each time; the site's icon. */
export function dashboardRoutes(r: Router, _deps: Deps): void {
  r.get('/favicon.ico', (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'image/svg+xml';
    ctx.body = FAVICON_SVG;
  });
  r.get('/dashboard/assets/:name', async (ctx) => {
    const name = ctx.params.name;
    const type = TYPES[path.extname(name)];
    const file = path.join(DASHBOARD_DIST, 'assets', name);
    if (!/^[\w.-]+$/.test(name) || !type || !fs.existsSync(file)) throw notFound('Asset');
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = type;
    ctx.body = fs.createReadStream(file);
  });
  // Every other page is the single-page app's; /dashboard/session is the API's (api/session).
  r.get(/^\/dashboard(?:\/(?!session(?:\/|$)|assets\/).*)?$/, async (ctx) => sendIndex(ctx));
}
