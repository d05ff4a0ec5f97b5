import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { z } from 'zod';
import { verifyPassword } from '../../lib/accounts/passwords';
import { membershipsOf, normaliseEmail } from '../../lib/accounts/people';
import { createSession, endSession, findSession, SESSION_COOKIE, setSessionWorkspace, type Session } from '../../lib/accounts/sessions';
import { attemptSucceeded, beginAttempt } from '../../lib/accounts/throttle';
import type { Deps } from '../deps';
import { ApiError, forbidden, unauthorized } from '../errors';
import { clientAddress, clientProtocol } from '../middleware/client';
import { assertCsrfToken, assertSameOrigin, cookieSession } from '../middleware/session';
import { parseBody } from '../middleware/validate';

export const signInBody = z.object({ email: z.string().trim().min(1).max(320), password: z.string().min(1).max(1024) }).strict();
export const switchBody = z.object({ workspace_id: z.string().min(1).max(100) }).strict();

const signedOut = () => unauthorized('Not signed in');

/**
 * The dashboard's only endpoints of its own (SPEC §15): sign in, sign out, who am I, switch
 * workspace. Everything else the dashboard does goes through the public API with its session.
 */
export function sessionRoutes(r: Router, deps: Deps): void {
  const { db, config } = deps;

  const view = async (s: Pick<Session, 'personId' | 'email' | 'workspaceId' | 'csrfToken'>) => {
    const workspaces = await membershipsOf(db, s.personId);
    const current = workspaces.some((w) => w.id === s.workspaceId) ? s.workspaceId : null;
    return { person: { id: s.personId, email: s.email }, workspace_id: current, workspaces, csrf_token: s.csrfToken };
  };

  const setCookie = (ctx: ParameterizedContext, token: string | null) => {
    ctx.cookies.set(SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'lax',
      secure: clientProtocol(ctx) === 'https',
      path: '/',
      maxAge: token ? config.dashboard.sessionTtlSeconds * 1000 : 0,
      overwrite: true,
    });
  };

  r.post('/dashboard/session', async (ctx) => {
    // Login CSRF: another site must not sign a visitor in to an account of its choosing.
    assertSameOrigin(ctx, config.publicBaseUrl);
    const body = parseBody(ctx, signInBody);
    const email = normaliseEmail(body.email);
    const ip = clientAddress(ctx);
    const attempt = await beginAttempt(db, email, ip, config.dashboard);
    if (!attempt.allowed) {
      throw new ApiError(429, 'sign_in_throttled', 'Too many failed sign-ins; wait before trying again', undefined, { 'Retry-After': String(attempt.retryAfter) });
    }
    // The attempt is already counted as a failure; only a right password takes it back.
    const person = await db('people').whereRaw('lower(email) = ?', [email]).first('id', 'email', 'password_hash');
    if (!(await verifyPassword(person?.password_hash ?? null, body.password))) {
      throw new ApiError(401, 'invalid_credentials', 'The email or the password is wrong');
    }
    await attemptSucceeded(db, attempt.id, email, ip);
    const first = (await membershipsOf(db, person.id))[0]?.id ?? null;
    const token = await createSession(db, person.id, first, config.dashboard.sessionTtlSeconds);
    setCookie(ctx, token);
    const session = await findSession(db, token);
    if (!session) throw signedOut();
    ctx.body = await view(session);
  });

  r.get('/dashboard/session', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const session = await cookieSession(db, ctx);
    // The dashboard's first question (issue 49): a signed-out visit is an answer, not a failed
    // request in the browser's console.
    if (!session && ctx.query.if_signed_in === '1') {
      ctx.status = 204;
      return;
    }
    if (!session) throw signedOut();
    ctx.body = await view(session);
  });

  r.delete('/dashboard/session', async (ctx) => {
    const session = await cookieSession(db, ctx);
    if (session) {
      assertSameOrigin(ctx, config.publicBaseUrl);
      assertCsrfToken(ctx, session);
      await endSession(db, ctx.cookies.get(SESSION_COOKIE) as string);
    }
    setCookie(ctx, null);
    ctx.status = 204;
  });

  r.put('/dashboard/session/workspace', async (ctx) => {
    const session = await cookieSession(db, ctx);
    if (!session) throw signedOut();
    assertSameOrigin(ctx, config.publicBaseUrl);
    assertCsrfToken(ctx, session);
    const { workspace_id } = parseBody(ctx, switchBody);
    const member = await db('memberships').where({ person_id: session.personId, workspace_id }).first('workspace_id');
    if (!member) throw forbidden('not_a_member', 'You are not a member of that workspace');
    await setSessionWorkspace(db, session.tokenHash, workspace_id);
    ctx.body = await view({ ...session, workspaceId: workspace_id });
  });
}
