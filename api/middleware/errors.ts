import type { Middleware } from 'koa';
import { StorageError } from '../../lib/storage/types';
import { ApiError } from '../errors';

/**
 * Renders every failure as `{error: {code, message, details?}, request_id}` (Form B: inside
 * `{success: false}`). Unknown errors become a 500 without internals and are logged once.
 */
export const errorMiddleware: Middleware = async (ctx, next) => {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) throw new ApiError(404, 'not_found', `No route for ${ctx.method} ${ctx.path}`);
  } catch (err) {
    let e: ApiError;
    if (err instanceof ApiError) e = err;
    else if (err instanceof StorageError) e = new ApiError(err.status, err.code, err.message);
    else {
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
