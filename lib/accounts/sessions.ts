import { createHash } from 'node:crypto';
import type { Db } from '../db';
import { randomToken } from '../ids';

export const SESSION_COOKIE = 'vh_session';

export interface Session {
  tokenHash: string;
  personId: string;
  email: string;
  workspaceId: string | null;
  csrfToken: string;
}

// The token carries 256 random bits, so sha256 is enough to keep the table useless to a thief.
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** Starts a session in `workspaceId`; returns the cookie's token (stored only as a hash). */
export async function createSession(db: Db, personId: string, workspaceId: string | null, ttlSeconds: number): Promise<string> {
  const token = randomToken(32);
  await db('sessions').insert({
    token_hash: hashToken(token),
    person_id: personId,
    workspace_id: workspaceId,
    csrf_token: randomToken(24),
    expires_at: new Date(Date.now() + ttlSeconds * 1000),
  });
  if (Math.random() < 0.05) void db('sessions').where('expires_at', '<', new Date()).delete().catch(() => undefined);
  return token;
}

export async function findSession(db: Db, token: string): Promise<Session | null> {
  const row = await db('sessions as s')
    .join('people as p', 'p.id', 's.person_id')
    .where({ 's.token_hash': hashToken(token) })
    .where('s.expires_at', '>', new Date())
    .first('s.token_hash', 's.person_id', 'p.email', 's.workspace_id', 's.csrf_token');
  if (!row) return null;
  return { tokenHash: row.token_hash, personId: row.person_id, email: row.email, workspaceId: row.workspace_id, csrfToken: row.csrf_token };
}

export async function endSession(db: Db, token: string): Promise<void> {
  await db('sessions').where({ token_hash: hashToken(token) }).delete();
}

export async function setSessionWorkspace(db: Db, tokenHash: string, workspaceId: string): Promise<void> {
  await db('sessions').where({ token_hash: tokenHash }).update({ workspace_id: workspaceId });
}
