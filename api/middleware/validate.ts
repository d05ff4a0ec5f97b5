import type { Middleware, ParameterizedContext } from 'koa';
import { z } from 'zod';
import { nulField } from '../../lib/text';
import { badRequest } from '../errors';

/** 400 `invalid_request` when any string in `value` (a body, a query, tus metadata) holds a NUL byte. */
export function assertNoNul(value: unknown, where: string): void {
  const field = nulField(value);
  if (field) throw badRequest('invalid_request', `${where} contains a NUL byte`, [{ field: field === '(value)' ? where : field, message: 'must not contain NUL (\\u0000)' }]);
}

/** Every query string, before any route reads it (a `%00` is the only way a NUL gets into one). */
export const noNulInQuery: Middleware = async (ctx, next) => {
  if (ctx.querystring.includes('%00')) assertNoNul(ctx.query, 'The query string');
  return next();
};

function details(error: z.ZodError) {
  return error.issues.map((i) => ({ field: i.path.join('.') || '(body)', message: i.message }));
}

/** Parses `ctx.state.body` with a schema; 400 `invalid_parameters` listing each bad field. */
export function parseBody<T extends z.ZodType>(ctx: ParameterizedContext, schema: T): z.infer<T> {
  const r = schema.safeParse(ctx.state.body ?? {});
  if (!r.success) throw badRequest('invalid_parameters', 'The request has invalid parameters', details(r.error));
  return r.data;
}

export function parseQuery<T extends z.ZodType>(ctx: ParameterizedContext, schema: T): z.infer<T> {
  const r = schema.safeParse(ctx.query);
  if (!r.success) throw badRequest('invalid_parameters', 'The query string has invalid parameters', details(r.error));
  return r.data;
}
