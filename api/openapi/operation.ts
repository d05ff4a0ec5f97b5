import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { Config } from '../../lib/config';
import { EnvelopeError, ErrorBody, STATUS_TEXT } from './common';

export const SECURITY: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head' | 'options';

export interface Operation {
  method: Method;
  /** OpenAPI path (`/videos/{id}`), relative to the servers (or to `servers` below). */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Key-less surfaces (health, CDN, player, docs) say `false`. Default: needs a key. */
  auth?: boolean;
  /** Form B: answers and errors in `{success, data|error}`. */
  envelope?: boolean;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** A body that is not JSON: media type → schema. */
  rawBody?: Record<string, z.ZodType>;
  /** Success answers: status → JSON schema, or a full response object for other media types. */
  responses: Record<number, z.ZodType | { description: string; content?: Record<string, { schema: z.ZodType }>; headers?: z.ZodObject }>;
  /** Error statuses this operation answers with (401, 429, 500 are added when `auth`). */
  errors?: readonly number[];
  /** Path-level servers (the CDN and player live on their own public URLs). */
  servers?: readonly string[];
  /** The Koa route this documents when it cannot be derived from `path` (wildcards). */
  koaRoute?: string;
  /** Request headers the operation reads (tus: Tus-Resumable, Upload-Length, …). */
  headers?: z.ZodObject;
  /** The body is optional (tus creation without data). */
  optionalBody?: boolean;
  /** Errors may also come as plain text (answers relayed from the tus server). */
  textErrors?: boolean;
}

export interface DocContext {
  registry: OpenAPIRegistry;
  config: Config;
}

const RESPONSE_HEADERS = z.object({ 'X-Request-Id': z.string().meta({ description: 'Also in every log line of the request' }) });
const KEYED_HEADERS = RESPONSE_HEADERS.extend({
  'X-RateLimit-Limit': z.string(),
  'X-RateLimit-Remaining': z.string(),
  'X-RateLimit-Reset': z.string().meta({ description: 'Unix seconds when the window resets' }),
});

/** Registers one operation with the shared conventions: security, error answers, idempotency header. */
export function operation(d: DocContext, op: Operation): void {
  const keyed = op.auth !== false;
  const headers = keyed ? KEYED_HEADERS : RESPONSE_HEADERS;
  const responses: RouteConfig['responses'] = {};
  for (const [status, r] of Object.entries(op.responses)) {
    if (r instanceof z.ZodType) {
      responses[status] = { description: `${status === '204' ? 'No content' : 'Success'}`, headers, content: { 'application/json': { schema: r } } };
    } else {
      responses[status] = { headers: r.headers ?? headers, ...r };
    }
  }
  // What any keyed operation can answer, whatever it does: a bad key, a read key on a write, a
  // path id that is not the caller's, the rate limit, a dependency down, a bug.
  const errors = new Set([...(op.errors ?? []), 500]);
  if (keyed) [401, 429, 503].forEach((s) => errors.add(s));
  if (keyed && op.method !== 'get') errors.add(403);
  if (keyed && op.params) errors.add(404);
  if (op.method === 'post' && keyed) [409, 422].forEach((s) => errors.add(s));
  if (op.body || op.rawBody) [400, 413].forEach((s) => errors.add(s));
  for (const status of [...errors].sort()) {
    responses[String(status)] = {
      description: STATUS_TEXT[status] ?? 'Error',
      headers: RESPONSE_HEADERS,
      content: {
        'application/json': { schema: op.envelope ? EnvelopeError : ErrorBody },
        ...(op.textErrors ? { 'text/plain': { schema: z.string().meta({ description: 'The tus server\'s short error text' }) } } : {}),
      },
    };
  }
  const idempotency = op.method === 'post' && keyed
    ? z.object({
        'Idempotency-Key': z.string().max(255).optional().meta({
          description: 'Makes a retried POST safe: the same key and body within 24 h answer the first response again (`Idempotent-Replayed: true`). See docs/api.md.',
        }),
      })
    : undefined;
  const extra: Record<string, unknown> = {};
  if (op.koaRoute) extra['x-koa-route'] = op.koaRoute;
  d.registry.registerPath({
    method: op.method,
    path: op.path,
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: [op.tag],
    security: keyed ? SECURITY : [],
    servers: op.servers?.map((url) => ({ url })),
    request: {
      params: op.params,
      query: op.query,
      headers: idempotency && op.headers ? idempotency.extend(op.headers.shape) : (idempotency ?? op.headers),
      body: op.body
        ? { required: !op.optionalBody, content: { 'application/json': { schema: op.body } } }
        : op.rawBody
          ? { required: !op.optionalBody, content: Object.fromEntries(Object.entries(op.rawBody).map(([type, schema]) => [type, { schema }])) }
          : undefined,
    },
    responses,
    ...extra,
  });
}
