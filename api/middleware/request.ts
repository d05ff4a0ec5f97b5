import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../lib/logger';
import { redactUrl } from '../../lib/redact';

/** `req_` + 32 hex: the X-Request-Id of a response and its log lines. */
export const newRequestId = () => `req_${randomUUID().replace(/-/g, '')}`;

/** The one line logged per request: the original URL (prefix and query included), tokens redacted. */
export function logRequest(log: Logger, method: string, url: string, status: number, startedNs: bigint): void {
  const ms = Number(process.hrtime.bigint() - startedNs) / 1e6;
  log.info({ method, path: redactUrl(url), status, ms: Math.round(ms) }, 'request');
}

/**
 * Request id on every response, one log line per request. Hot-path costs avoided: the id is
 * `req_` + 32 hex of randomUUID (which draws from Node's entropy cache, not a getrandom call per
 * request as a UUIDv7 does), and the request's child logger is made only when something logs.
 */
export function requestContext(log: Logger): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    ctx.state.requestId = newRequestId();
    ctx.set('X-Request-Id', ctx.state.requestId);
    let child: Logger | undefined;
    const bindings: Record<string, string> = { req: ctx.state.requestId };
    Object.defineProperty(ctx.state, 'log', {
      get: () => (child ??= log.child(bindings)),
      set: (v: Logger) => (child = v),
      configurable: true,
      enumerable: true,
    });
    // Who the request acts for (key, workspace, person), added to its log lines once known.
    ctx.state.logAs = (more: Record<string, string>) => {
      if (child) child = child.child(more);
      else Object.assign(bindings, more);
    };
    try {
      await next();
    } finally {
      if (log.isLevelEnabled('info')) logRequest(ctx.state.log!, ctx.method, ctx.originalUrl, ctx.status, started);
    }
  };
}

const ENVELOPE = /^\/upload\/(presigned|confirm\/[^/]+|from-url)\/?$/;

/** `/v1/x` and `/api/v1/x` are `/x` (SPEC §1); Form B endpoints answer in an envelope at every prefix. */
export const versionPrefixes: Middleware = async (ctx, next) => {
  const m = /^\/(?:api\/)?v1(\/.*)$/.exec(ctx.path);
  if (m) ctx.path = m[1];
  if (ENVELOPE.test(ctx.path)) ctx.state.envelope = true;
  return next();
};
