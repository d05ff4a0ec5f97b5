import assert from 'node:assert/strict';
import type { Layer } from '@koa/router';
import { createConfig, lintDocument, makeDocumentFromString, BaseResolver } from '@redocly/openapi-core';
import { ALL_METHOD_MOUNTS, buildDocument, UNDOCUMENTED } from '../../api/openapi/document';
import { apiRouter, publicRouter, sessionRouter } from '../../api/routes';
import type { Deps } from '../../api/deps';
import { loadConfig } from '../../lib/config';
import { createDb } from '../../lib/db';
import { createLogger } from '../../lib/logger';
import { createStorage } from '../../lib/storage';
import { mountPath } from '../../lib/playback/urls';

// Nothing here connects anywhere: the routers are only built, never called.
const config = loadConfig({ DATA_DIR: '/tmp/vidhost-contract-unit', PUBLIC_CDN_URL: 'http://cdn.example.test/media', PUBLIC_PLAYER_URL: 'http://localhost:3000/player' });
const doc = buildDocument(config);

function routersOf(): Array<{ router: ReturnType<typeof apiRouter>; keyed: boolean }> {
  const deps = { config, db: createDb('postgres://nobody@127.0.0.1:1/none', 1), storage: createStorage(config), temporal: {} as never, log: createLogger('silent'), hot: {} as never } as Deps;
  return [
    { router: publicRouter(deps), keyed: false },
    { router: apiRouter(deps), keyed: true },
    { router: sessionRouter(deps), keyed: false },
  ];
}

/** `METHOD /koa/route` for every operation, as the Koa router spells its routes. */
function documentedRoutes(): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, { servers?: Array<{ url: string }>; 'x-koa-route'?: string }>)) {
      if (!['get', 'put', 'post', 'delete', 'patch', 'options', 'head'].includes(method)) continue;
      const prefix = op.servers?.[0] ? mountPath(op.servers[0].url) : '';
      const route = op['x-koa-route'] ?? prefix + path.replace(/\{([^}]+)\}/g, ':$1');
      out.add(`${method.toUpperCase()} ${route}`);
    }
  }
  return out;
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (JSON Schema of the specification)', async () => {
    const { Validator } = await import('@seriousme/openapi-schema-validator');
    const result = await new Validator().validate(JSON.parse(JSON.stringify(doc)));
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
    assert.equal(doc.openapi, '3.1.0');
  });

  it('passes the Redocly recommended lint with no errors (offline)', async () => {
    const lintConfig = await createConfig({ extends: ['recommended'] });
    // A resolver that refuses anything outside the document: lint must never fetch.
    const resolver = new BaseResolver();
    resolver.loadExternalRef = async (ref: string) => {
      throw new Error(`lint tried to resolve ${ref}`);
    };
    const problems = await lintDocument({
      document: makeDocumentFromString(JSON.stringify(doc), 'openapi.json'),
      config: lintConfig.styleguide,
      externalRefResolver: resolver,
    });
    const errors = problems.filter((p) => p.severity === 'error');
    assert.deepEqual(errors.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`), []);
  });

  it('documents every route the Koa routers serve', () => {
    const documented = documentedRoutes();
    const missing: string[] = [];
    for (const { router } of routersOf()) {
      for (const layer of router.stack as Layer[]) {
        const all = typeof layer.path === 'string' ? ALL_METHOD_MOUNTS[layer.path] : undefined;
        if (all) {
          // An `r.all` mount: the methods it really serves must be documented, the rest answer 405.
          for (const method of all.methods) if (!documented.has(`${method} ${layer.path}`)) missing.push(`${method} ${layer.path}`);
          continue;
        }
        for (const method of layer.methods) {
          if (method === 'HEAD') continue; // Koa adds HEAD to every GET
          const route = `${method} ${layer.path}`;
          if (!documented.has(route) && !UNDOCUMENTED[route]) missing.push(route);
        }
      }
    }
    assert.deepEqual(missing, [], `routes without an operation in the OpenAPI document (add them to api/<resource>/openapi.ts): ${missing.join(', ')}`);
  });

  it('has both security schemes, the three prefixes, the envelope, the webhooks and the CDN and player URLs', () => {
    assert.deepEqual(Object.keys(doc.components?.securitySchemes ?? {}).sort(), ['apiKeyHeader', 'bearerAuth']);
    assert.deepEqual(doc.servers?.map((s) => s.url), ['http://localhost:3000/v1', 'http://localhost:3000/api/v1', 'http://localhost:3000']);
    const presigned = JSON.stringify(doc.paths?.['/upload/presigned']);
    assert.match(presigned, /"success"/);
    assert.match(presigned, /EnvelopeError/);
    assert.deepEqual(Object.keys(doc.webhooks ?? {}).sort(), [
      'live_stream.active',
      'live_stream.connected',
      'live_stream.disconnected',
      'live_stream.idle',
      'live_stream.warning',
      'video.audio_track.deleted', 'video.audio_track.failed', 'video.audio_track.ready', 'video.captions.failed', 'video.captions.ready', 'video.deleted', 'video.failed', 'video.ready', 'video.uploaded',
    ]);
    assert.equal(doc.paths?.['/v/{subject}/master.m3u8']?.get?.servers?.[0].url, 'http://cdn.example.test/media');
    assert.equal(doc.paths?.['/embed/{id}']?.get?.servers?.[0].url, 'http://localhost:3000/player');
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      for (const op of Object.values(item as Record<string, { operationId?: string }>)) {
        if (op && typeof op === 'object' && 'responses' in op) assert.ok(op.operationId, `${path} has an operation without operationId`);
      }
    }
  });
});
