import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';
import { signInBody, switchBody } from './routes';

const session = z
  .object({
    person: z.object({ id: z.string(), email: z.string() }),
    workspace_id: z.string().nullable(),
    workspaces: z.array(z.object({ id: z.string() }).catchall(z.unknown())),
    csrf_token: z.string().meta({ description: 'Send as X-CSRF-Token on the dashboard\'s writes' }),
  })
  .meta({ id: 'DashboardSession' });

/**
 * The dashboard's sign-in (SPEC §15): an HttpOnly session cookie, not an API key. Documented
 * for completeness; API clients use keys.
 */
export function sessionDocs(d: DocContext): void {
  const common = { tag: 'Dashboard', auth: false, servers: [d.config.publicBaseUrl] } as const;
  operation(d, {
    ...common, method: 'post', path: '/dashboard/session', operationId: 'signIn', summary: 'Sign in (sets the session cookie)',
    body: signInBody, responses: { 200: session }, errors: [400, 401, 403, 429],
  });
  operation(d, {
    ...common, method: 'get', path: '/dashboard/session', operationId: 'getSession', summary: 'The signed-in person',
    description: 'Without a live session: 401 `unauthorized`, or 204 with `?if_signed_in=1` (how the dashboard asks at its start, so a signed-out visit logs no failed request)',
    query: z.object({ if_signed_in: z.enum(['1']).optional() }),
    responses: { 200: session, 204: { description: 'No live session (`if_signed_in=1`)' } }, errors: [401],
  });
  operation(d, { ...common, method: 'delete', path: '/dashboard/session', operationId: 'signOut', summary: 'Sign out', responses: { 204: { description: 'Signed out' } }, errors: [403] });
  operation(d, {
    ...common, method: 'put', path: '/dashboard/session/workspace', operationId: 'switchWorkspace', summary: 'Switch the session\'s workspace',
    body: switchBody, responses: { 200: session }, errors: [401, 403, 404],
  });
  operation(d, {
    ...common, method: 'get', path: '/dashboard/assets/{name}', operationId: 'dashboardAsset', summary: 'The dashboard\'s scripts and styles',
    params: z.object({ name: z.string() }),
    responses: { 200: { description: 'The asset', content: { 'application/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } } } },
    errors: [404],
  });
}
