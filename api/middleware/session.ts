import { timingSafeEqual } from 'node:crypto';
import type { Middleware, ParameterizedContext } from 'koa';
import { findSession, SESSION_COOKIE, type Session } from '../../lib/accounts/sessions';
import type { Db } from '../../lib/db';
import type { AuthState } from '../deps';
import { forbidden } from '../errors';
import { clientProtocol } from './client';

declare module 'koa' {
  interface DefaultState {
    session?: Session;
  }
}

const SAFE = ['GET', 'HEAD', 'OPTIONS'];

/**
 * A state change carried by a cookie must come from our own pages: the browser's `Origin` (or,
 * without it, `Sec-Fetch-Site`) must name this site. Origins compared: the configured base URL's
 * and the one the request itself was addressed to (OWASP: "verify the origin with standard headers").
 */
export function assertSameOrigin(ctx: ParameterizedContext, publicBaseUrl: string): void {
  const origin = ctx.get('origin');
  if (origin) {
    // Not ctx.origin: Koa 3 answers that with the Origin header itself.
    const self = `${clientProtocol(ctx)}://${ctx.host}`;
    if (origin !== new URL(publicBaseUrl).origin && origin !== self) throw forbidden('csrf_origin', 'Cross-origin request refused');
    return;
  }
  const site = ctx.get('sec-fetch-site');
  if (site && site !== 'same-origin' && site !== 'none') throw forbidden('csrf_origin', 'Cross-origin request refused');
}

/** The SPA echoes the session's CSRF token in `X-CSRF-Token`; a cross-site form cannot read it. */
export function assertCsrfToken(ctx: ParameterizedContext, session: Session): void {
  const sent = Buffer.from(ctx.get('x-csrf-token'));
  const want = Buffer.from(session.csrfToken);
  if (sent.length !== want.length || !timingSafeEqual(sent, want)) throw forbidden('csrf_token', 'Missing or wrong X-CSRF-Token header');
}

/** The session of this request's cookie, if it is live; unchecked for CSRF. */
export async function cookieSession(db: Db, ctx: ParameterizedContext): Promise<Session | null> {
  const token = ctx.cookies.get(SESSION_COOKIE);
  return token ? findSession(db, token) : null;
}

/**
 * Session-to-key plumbing: a request with no API key but a live session cookie acts with full
 * access on the session's current workspace, as a key of that workspace would, within the
 * person's role there (`requireOwner` in middleware/auth.ts). State changes need
 * the same origin and the CSRF token. A presented key always wins over the cookie.
 */
export function sessionAuth(db: Db, publicBaseUrl: string): Middleware {
  return async (ctx, next) => {
    if (ctx.get('authorization') || ctx.get('x-api-key')) return next();
    const session = await cookieSession(db, ctx);
    if (!session) return next();
    if (!SAFE.includes(ctx.method)) {
      assertSameOrigin(ctx, publicBaseUrl);
      assertCsrfToken(ctx, session);
    }
    // Membership is checked on every request, so removing someone takes effect at once.
    const ws = session.workspaceId
      ? await db('memberships as m').join('workspaces as w', 'w.id', 'm.workspace_id').where({ 'm.person_id': session.personId, 'm.workspace_id': session.workspaceId }).first('w.id', 'w.plan', 'm.role')
      : undefined;
    if (!ws) throw forbidden('no_workspace', 'This session has no workspace; switch to one of yours');
    const auth: AuthState = { keyId: `session:${session.personId}`, workspaceId: ws.id, access: 'full', plan: ws.plan, personId: session.personId, role: ws.role };
    ctx.state.auth = auth;
    ctx.state.session = session;
    ctx.state.logAs?.({ person: session.personId, ws: ws.id });
    return next();
  };
}
