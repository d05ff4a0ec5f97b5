import type { ParameterizedContext } from 'koa';
import { z } from 'zod';
import { badRequest } from '../errors';

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
