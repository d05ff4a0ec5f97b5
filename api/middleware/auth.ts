import type { Middleware, ParameterizedContext } from 'koa';
import type { AuthState } from '../deps';
import type { Hot } from '../hot';
import { forbidden, tooManyBadKeys, unauthorized } from '../errors';
import { clientAddress } from './client';

/**
 * The key a request presents, from its `Authorization` and `X-API-Key` headers (absent: ''):
 * the key, null when none is presented, or why what was presented is refused (401). One rule for
 * the Koa chain and the reads answered before it (api/videos/fast.ts).
 */
export function keyOfHeaders(authz: string, apiKey: string): { key: string | null } | { refused: string } {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authz)?.[1] ?? null;
  if (authz && !bearer) return { refused: 'Authorization header must be "Bearer <key>"' };
  const header = apiKey.trim() || null;
  if (bearer && header && bearer !== header) return { refused: 'Authorization and X-API-Key carry different keys' };
  return { key: bearer ?? header };
}

function presentedKey(ctx: ParameterizedContext): string | null {
  const presented = keyOfHeaders(ctx.get('authorization'), ctx.get('x-api-key'));
  if ('refused' in presented) throw unauthorized(presented.refused);
  return presented.key;
}

/** Seconds until a limiter window ends (at least 1), for Retry-After. */
export const retryAfter = (resetAt: number) => Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));

/**
 * An API key from the headers, resolved through the in-memory cache. A wrong key costs the client
 * address one of its per-minute attempts; once they are spent the address gets 429 before any
 * lookup, so keys cannot be guessed at the database's speed.
 */
export async function apiKeyAuth(ctx: ParameterizedContext, hot: Hot): Promise<AuthState | null> {
  const secret = presentedKey(ctx);
  if (!secret) return null;
  const known = hot.keys.peek(secret);
  if (known) return known;
  if (await hot.badKeys.blocked(clientAddress(ctx))) throw tooManyBadKeys(60);
  const identity = await hot.keys.lookup(secret);
  if (identity) return identity;
  const d = await hot.badKeys.consume(clientAddress(ctx));
  if (!d.allowed) throw tooManyBadKeys(retryAfter(d.resetAt));
  throw unauthorized('The API key is invalid or revoked');
}

/**
 * Sets `ctx.state.auth`. Each way of authenticating returns an identity or null (nothing
 * presented), or throws when what was presented is wrong; the first identity wins.
 */
export function authenticate(hot: Hot): Middleware {
  const methods = [apiKeyAuth];
  return async (ctx, next) => {
    if (ctx.state.auth) return next(); // a dashboard session stood in for a key (middleware/session.ts)
    let found: AuthState | null = null;
    for (const method of methods) if ((found = await method(ctx, hot))) break;
    if (!found) throw unauthorized();
    ctx.state.auth = found;
    ctx.state.logAs?.({ key: found.keyId, ws: found.workspaceId });
    return next();
  };
}

/** Read keys may call GET endpoints only (and /playback, which is a GET). */
export const requireScope: Middleware = async (ctx, next) => {
  const auth = ctx.state.auth;
  if (auth && auth.access !== 'full' && !['GET', 'HEAD', 'OPTIONS'].includes(ctx.method)) {
    throw forbidden('insufficient_scope', 'This API key is read-only; a full-access key is required');
  }
  return next();
};

export function requireFull(ctx: ParameterizedContext): void {
  if (ctx.state.auth?.access !== 'full') throw forbidden('insufficient_scope', 'A full-access key is required');
}

/**
 * Keys, members and webhooks are the owners' (docs/dashboard.md, "Roles"): a member's session is
 * refused. A full-access key acts as an owner; members cannot make one.
 */
export function requireOwner(ctx: ParameterizedContext): void {
  requireFull(ctx);
  if (ctx.state.auth?.role === 'member') throw forbidden('owner_required', 'Only an owner of the workspace can do this');
}

export function auth(ctx: ParameterizedContext): AuthState {
  if (!ctx.state.auth) throw unauthorized();
  return ctx.state.auth;
}
