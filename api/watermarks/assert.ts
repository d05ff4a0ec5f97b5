import type { Knex } from 'knex';
import { parseId } from '../../lib/ids';
import { badRequest } from '../errors';

/** A live (not deleted) profile of this workspace, by its public id; 400 `invalid_watermark_id` otherwise. */
export async function assertWatermarkOf(db: Knex, workspaceId: string, id: string, field: string): Promise<string> {
  const wid = parseId('wm', id);
  const found = wid ? await db('watermarks').where({ id: wid, workspace_id: workspaceId }).whereNull('deleted_at').first('id') : undefined;
  if (!found) throw badRequest('invalid_watermark_id', `${field} does not name a watermark of this workspace`, [{ field, message: 'not found' }]);
  return found.id;
}

/**
 * The profile a new video or live stream takes (SPEC §24): the one it names, none for null, else
 * the workspace's default (read now: changing the default later leaves it as it is).
 */
export async function watermarkForNew(db: Knex, workspaceId: string, given: string | null | undefined, field = 'watermark_id'): Promise<string | null> {
  if (given === null) return null;
  if (given !== undefined) return assertWatermarkOf(db, workspaceId, given, field);
  const w = await db('workspaces').where({ id: workspaceId }).first('default_watermark_id');
  return w?.default_watermark_id ?? null;
}
