import fs from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import type { Deps } from '../deps';
import { notFound } from '../errors';
import { buildDocument } from './document';
import { ROOT } from '../../lib/root';

const dist = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, { file: string; type: string }> = {
  'swagger-ui.css': { file: path.join(dist, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: path.join(dist, 'swagger-ui-bundle.js'), type: 'application/javascript; charset=utf-8' },
  'reference.js': { file: path.join(ROOT, 'api', 'openapi', 'reference.js'), type: 'application/javascript; charset=utf-8' },
};
const VERSION: string = require('swagger-ui-dist/package.json').version;

const page = () => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>vidhost API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css?v=${VERSION}">
</head>
<body data-spec="/openapi.json">
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js?v=${VERSION}"></script>
<script src="/docs/assets/reference.js?v=${VERSION}"></script>
</body>
</html>
`;

/**
 * `GET /openapi.json` and `GET /docs` (SPEC §16), key-less. The reference page is Swagger UI from
 * the project's own `swagger-ui-dist`; its CSP keeps every request on this origin.
 */
export function openapiRoutes(r: Router, deps: Deps): void {
  let doc: string | undefined;
  r.get('/openapi.json', (ctx) => {
    doc ??= JSON.stringify(buildDocument(deps.config));
    ctx.type = 'application/json; charset=utf-8';
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.body = doc;
  });
  r.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'");
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = page();
  });
  r.get('/docs/assets/:name', (ctx) => {
    const asset = Object.hasOwn(ASSETS, ctx.params.name) ? ASSETS[ctx.params.name] : undefined;
    if (!asset) throw notFound('Asset');
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = fs.createReadStream(asset.file);
  });
}
