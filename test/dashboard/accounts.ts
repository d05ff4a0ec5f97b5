import { addMembership, upsertPerson, type Role } from '../../lib/accounts/people';
import type { Stack } from '../support/stack';

/** A dashboard account in `workspaceId`, as `admin account create` makes it. */
export async function account(s: Stack, email: string, workspaceId: string, role: Role = 'owner', password = 'correct horse battery'): Promise<{ email: string; password: string }> {
  const p = await upsertPerson(s.db, email, password);
  await addMembership(s.db, p.id, workspaceId, role);
  return { email, password };
}

/** The `name=value` of the session cookie a response set. */
export function sessionCookie(setCookie: string[] | string | undefined): string {
  const all = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  const c = all.find((h) => h.startsWith('vh_session='));
  if (!c) throw new Error(`no session cookie in ${JSON.stringify(all)}`);
  return c.split(';')[0];
}
