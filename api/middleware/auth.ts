import type { Middleware, ParameterizedContext } from 'koa';
import type { Db } from '../../lib/db';
import { hashKey } from '../../lib/keys';
import type { AuthState } from '../deps';
import { forbidden, unauthorized } from '../errors';


function presentedKey(ctx: ParameterizedContext): string | null {
  const authz = ctx.get('authorization');
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authz)?.[1] ?? null;
  if (authz && !bearer) throw unauthorized('Authorization header must be "Bearer <key>"');
  const header = ctx.get('x-api-key').trim() || null;
  if (bearer && header && bearer !== header) throw unauthorized('Authorization and X-API-Key carry different keys');
  return bearer ?? header;
}

/** Resolves the API key to its workspace; sets `ctx.state.auth`. */
export function authenticate(db: Db): Middleware {
  return async (ctx, next) => {
    const secret = presentedKey(ctx);
    if (!secret) throw unauthorized();
    const row = await db('api_keys as k')
      .join('workspaces as w', 'w.id', 'k.workspace_id')
      .where({ 'k.key_hash': hashKey(secret) })
      .whereNull('k.revoked_at')
      .first('k.id', 'k.workspace_id', 'k.access', 'w.plan');
    if (!row) throw unauthorized('The API key is invalid or revoked');
    const auth: AuthState = { keyId: row.id, workspaceId: row.workspace_id, access: row.access, plan: row.plan };
    ctx.state.auth = auth;
    ctx.state.log = ctx.state.log?.child({ key: auth.keyId, ws: auth.workspaceId });
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

export function auth(ctx: ParameterizedContext): AuthState {
  if (!ctx.state.auth) throw unauthorized();
  return ctx.state.auth;
}
