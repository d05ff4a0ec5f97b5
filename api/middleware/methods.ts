import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { ApiError, notFound } from '../errors';

// What the routes use. Anything else (PROPFIND, TRACE, MKCOL, …) is refused here, before a key
// is asked for, instead of falling through to the router's 501.
const ROUTED = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export const methodNotAllowed = (allow: string[]) =>
  new ApiError(405, 'method_not_allowed', `This path answers ${allow.join(', ')}`, undefined, { Allow: allow.join(', ') });

/** The methods any of `routers` answers on `path`. */
function allowedOn(routers: Router[], path: string): string[] {
  const allow = new Set<string>();
  for (const r of routers) for (const layer of r.match(path, 'GET').path) for (const m of layer.methods) allow.add(m);
  return [...allow];
}

/** Unknown methods: 405 with Allow on a path that exists, else 404 — never 501. */
export function knownMethods(routers: Router[]): Middleware {
  return async (ctx, next) => {
    if (ROUTED.has(ctx.method)) return next();
    const allow = allowedOn(routers, ctx.path);
    if (allow.length === 0) throw notFound('Route');
    throw methodNotAllowed(allow);
  };
}
