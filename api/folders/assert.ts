import type { Knex } from 'knex';
import { badRequest } from '../errors';

/** 400 naming `field` unless `folderId` is a folder of this workspace (videos and folders alike point at one). */
export async function assertFolderOf(db: Knex, workspaceId: string, folderId: string, field: 'folder_id' | 'parent_id'): Promise<void> {
  const found = await db('folders').where({ id: folderId, workspace_id: workspaceId }).first('id');
  if (!found) throw badRequest('invalid_parameters', `${field} does not name a folder of this workspace`, [{ field, message: 'not found' }]);
}
