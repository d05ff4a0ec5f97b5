import type { Middleware } from 'koa';
import { outageOf, type Outage } from '../../lib/outage';
import { StorageError } from '../../lib/storage/types';
import { ApiError, RETRY_AFTER_SECONDS, unavailable } from '../errors';

const outageMessages: Record<Outage, string> = {
  database: 'The database is unavailable; try again shortly',
  temporal: 'The processing service is unavailable; try again shortly',
  storage: 'Storage is unavailable; try again shortly',
};
import { methodNotAllowed } from './methods';

/** SQLSTATE query_canceled: statement_timeout, or pg_cancel_backend. */
const QUERY_CANCELED = '57014';

/**
 * Renders every failure as `{error: {code, message, details?}, request_id}` (Form B: inside
 * `{success: false}`). A dependency out of reach (Postgres, Temporal, S3) is a 503 with
 * `Retry-After`, logged as a warning; other unknown errors become a 500 without internals and are
 * logged once.
 */
export const errorMiddleware: Middleware = async (ctx, next) => {
  try {
    await next();
    // ctx.respond === false: the route wrote the answer itself (the tus server).
    if (ctx.status === 404 && ctx.body === undefined && ctx.respond !== false) throw new ApiError(404, 'not_found', `No route for ${ctx.method} ${ctx.path}`);
    // The router's allowedMethods sets a bare 405 (with Allow); give it the JSON error shape.
    if (ctx.status === 405 && ctx.body === undefined) throw methodNotAllowed(ctx.response.get('Allow').split(/,\s*/).filter(Boolean));
  } catch (err) {
    let e: ApiError;
    if (err instanceof ApiError) e = err;
    else if (err instanceof StorageError) e = new ApiError(err.status, err.code, err.message);
    else if ((err as { code?: unknown } | null)?.code === QUERY_CANCELED) {
      // A statement past API_STATEMENT_TIMEOUT_MS (or of a request whose client went away),
      // cancelled by Postgres itself (issue 45).
      ctx.state.log?.warn({ err }, 'statement cancelled (statement timeout or client gone)');
      e = new ApiError(503, 'query_timeout', 'The request took too long and was cancelled; try again shortly', undefined, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
    }
    else if (outageOf(err)) {
      const outage = outageOf(err)!;
      ctx.state.log?.warn({ err, outage }, `${outage} unavailable`);
      e = unavailable(outageMessages[outage]);
    } else {
      ctx.state.log?.error({ err }, 'unhandled error');
      e = new ApiError(500, 'internal_error', 'Internal server error');
    }
    ctx.status = e.status;
    for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
    const error: Record<string, unknown> = { code: e.code, message: e.message };
    if (e.details !== undefined) error.details = e.details;
    ctx.body = ctx.state.envelope
      ? { success: false, error, request_id: ctx.state.requestId }
      : { error, request_id: ctx.state.requestId };
  }
};
