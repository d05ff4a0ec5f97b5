import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import type { Config } from '../../lib/config';
import { analyticsDocs } from '../analytics/openapi';
import { audioTrackDocs } from '../audio/openapi';
import { captionDocs } from '../captions/openapi';
import { cdnDocs } from '../cdn/openapi';
import { clipDocs } from '../clips/openapi';
import { encodingDocs } from '../encoding/openapi';
import { folderDocs } from '../folders/openapi';
import { healthDocs } from '../health/openapi';
import { keyDocs } from '../keys/openapi';
import { liveDocs } from '../live/openapi';
import { playbackDocs } from '../playback/openapi';
import { playerDocs } from '../player/openapi';
import { restrictionDocs } from '../restrictions/openapi';
import { watermarkDocs } from '../watermarks/openapi';
import { sessionDocs } from '../session/openapi';
import { storageDocs } from '../storage/openapi';
import { tagDocs } from '../tags/openapi';
import { tusDocs } from '../tus/openapi';
import { uploadDocs } from '../upload/openapi';
import { usageDocs } from '../usage/openapi';
import { videoDocs } from '../videos/openapi';
import { webhookDocs } from '../webhooks/openapi';
import type { DocContext } from './operation';
import { selfDocs } from './self';

/**
 * Every resource folder documents its own routes in `<resource>/openapi.ts`; adding an endpoint
 * means adding it there (and a folder's function here). test/contract/coverage.test.ts fails
 * for any Koa route that no operation documents.
 */
const RESOURCES: Array<(d: DocContext) => void> = [
  uploadDocs,
  tusDocs,
  videoDocs,
  captionDocs,
  audioTrackDocs,
  clipDocs,
  folderDocs,
  tagDocs,
  keyDocs,
  webhookDocs,
  liveDocs,
  playbackDocs,
  restrictionDocs,
  watermarkDocs,
  encodingDocs,
  storageDocs,
  cdnDocs,
  playerDocs,
  healthDocs,
  usageDocs,
  sessionDocs,
  selfDocs,
  analyticsDocs,
];

/** Koa routes deliberately left out of the document, with the reason. */
export const UNDOCUMENTED: Record<string, string> = {
  'GET /favicon.ico': 'the site icon browsers ask every page of the origin for (the dashboard, the embed player), not an API',
  'GET /player/*rest': "the player's catch-all: any other path under {player_url} answers the not-found page",
  'GET /^\\/dashboard(?:\\/(?!session(?:\\/|$)|assets\\/).*)?$/': "the dashboard's HTML pages (one single-page app at {base_url}/dashboard/…), not an API",
};

/**
 * Koa routes mounted with `r.all` (every HTTP method), with the methods they really serve: those
 * must be documented; any other method answers 405 `method_not_allowed` (JSON error).
 */
export const ALL_METHOD_MOUNTS: Record<string, { methods: string[]; reason: string }> = {
  '/upload/tus/:token': {
    methods: ['HEAD', 'PATCH', 'DELETE', 'OPTIONS'],
    reason: 'the tus upload resource: one handler for the tus methods; any other method → 405 method_not_allowed',
  },
};

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31['generateDocument']>;

export function buildDocument(config: Config): OpenApiDocument {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: '`Authorization: Bearer vhk_…`',
  });
  registry.registerComponent('securitySchemes', 'apiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'The same key in `X-API-Key`; both headers present and different → 401',
  });
  const d: DocContext = { registry, config };
  for (const document of RESOURCES) document(d);
  const base = config.publicBaseUrl;
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'vidhost',
      version: '1',
      description: [
        'Open-source video hosting: presigned or resumable upload, URL import, HLS transcoding, signed playback, webhooks.',
        '',
        'Every endpoint answers under three prefixes: `/v1` (canonical), `/api/v1` and none. `POST /upload/presigned`,',
        '`/upload/confirm/{video_id}` and `/upload/from-url` (Form B) answer in `{success, data}` / `{success: false, error}` envelopes;',
        'every other endpoint answers bare JSON, errors as `{error: {code, message, details?}, request_id}`.',
        'Every POST accepts `Idempotency-Key`. Contract notes and the error codes: docs/api.md.',
      ].join('\n'),
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [
      { url: `${base}/v1`, description: 'Canonical prefix (Form A)' },
      { url: `${base}/api/v1`, description: 'Form A alternative prefix' },
      { url: base, description: 'No prefix (Forms B and C)' },
    ],
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    tags: ['Uploads', 'Videos', 'Folders', 'Tags', 'API keys', 'Webhooks', 'Playback', 'Playback restrictions', 'Encoding', 'Usage', 'CDN', 'Player', 'Dashboard', 'Operations'].map((name) => ({ name })),
  });
}
