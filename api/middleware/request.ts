import type { Middleware } from 'koa';
import { newId } from '../../lib/ids';
import type { Logger } from '../../lib/logger';
import { redactUrl } from '../../lib/redact';

/** Request id on every response, one log line per request. */
export function requestContext(log: Logger): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    ctx.state.requestId = newId('req');
    ctx.set('X-Request-Id', ctx.state.requestId);
    ctx.state.log = log.child({ req: ctx.state.requestId });
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // The original URL (prefix and query included), with upload/playback tokens redacted.
      ctx.state.log.info({ method: ctx.method, path: redactUrl(ctx.originalUrl), status: ctx.status, ms: Math.round(ms) }, 'request');
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
