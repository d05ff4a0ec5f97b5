import { createHash } from 'node:crypto';
import type { Db } from './db';
import { newId, randomToken } from './ids';
import type { Plan } from './plans';

export type Access = 'read' | 'full';

// Keys carry 192 random bits, so a fast hash is enough: nothing to brute-force, unlike passwords.
export function hashKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export interface ApiKeyRecord {
  id: string;
  workspace_id: string;
  name: string;
  access: Access;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  /** The person who made it (a dashboard session's, or the maker of the key that made it); null from the admin CLI. */
  created_by: string | null;
}

/** Creates a key; the secret is returned here once and only its hash is stored. */
/** `createdBy`: the person making it (their removal from the workspace revokes it); none from the CLI. */
export async function createApiKey(db: Db, workspaceId: string, access: Access, name = '', createdBy: string | null = null): Promise<ApiKeyRecord & { secret: string }> {
  const secret = `vhk_${randomToken(24)}`;
  const id = newId('key');
  const [row] = await db('api_keys')
    .insert({ id, workspace_id: workspaceId, name, key_hash: hashKey(secret), key_prefix: secret.slice(0, 10), access, created_by: createdBy })
    .returning('*');
  return { ...toRecord(row), secret };
}

export function toRecord(row: { id: string; workspace_id: string; name: string; access: Access; key_prefix: string; created_at: Date; last_used_at: Date | null; created_by?: string | null }): ApiKeyRecord {
  return {
    id: row.id,
    workspace_id: row.workspace_id,
    name: row.name,
    access: row.access,
    prefix: row.key_prefix,
    created_at: new Date(row.created_at).toISOString(),
    last_used_at: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
    created_by: row.created_by ?? null,
  };
}

export { PLANS, type Plan } from './plans';

export async function createWorkspace(db: Db, name: string, plan: Plan = 'free'): Promise<{ id: string; name: string; plan: Plan }> {
  const id = newId('ws');
  await db('workspaces').insert({ id, name, plan });
  return { id, name, plan };
}
