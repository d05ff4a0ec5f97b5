import type { Db } from '../db';
import { newId } from '../ids';
import { hashPassword, MIN_PASSWORD_LENGTH } from './passwords';

export type Role = 'owner' | 'member';

export interface Person {
  id: string;
  email: string;
}

export interface Membership {
  id: string;
  name: string;
  plan: string;
  role: Role;
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Creates a person, or sets the password of the one with that email; returns the person. */
export async function upsertPerson(db: Db, email: string, password: string): Promise<Person & { created: boolean }> {
  if (password.length < MIN_PASSWORD_LENGTH) throw new Error(`the password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  const normal = normaliseEmail(email);
  if (!/^[^\s@]+@[^\s@]+$/.test(normal)) throw new Error(`"${email}" is not an email address`);
  const password_hash = await hashPassword(password);
  const existing = await db('people').whereRaw('lower(email) = ?', [normal]).first('id', 'email');
  if (existing) {
    await db('people').where({ id: existing.id }).update({ password_hash });
    // A new password (a reset) signs the person out everywhere.
    await db('sessions').where({ person_id: existing.id }).delete();
    return { ...existing, created: false };
  }
  const id = newId('usr');
  await db('people').insert({ id, email: normal, password_hash });
  return { id, email: normal, created: true };
}

export async function addMembership(db: Db, personId: string, workspaceId: string, role: Role): Promise<void> {
  await db('memberships').insert({ person_id: personId, workspace_id: workspaceId, role }).onConflict(['person_id', 'workspace_id']).merge({ role });
}

export async function membershipsOf(db: Db, personId: string): Promise<Membership[]> {
  return db('memberships as m')
    .join('workspaces as w', 'w.id', 'm.workspace_id')
    .where({ 'm.person_id': personId })
    .orderBy([{ column: 'w.created_at' }, { column: 'w.id' }])
    .select('w.id', 'w.name', 'w.plan', 'm.role');
}
