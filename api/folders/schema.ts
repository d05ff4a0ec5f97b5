import { z } from 'zod';

const name = z.string().trim().min(1).max(255);
const parentId = z.string().max(100).nullable();

export const createFolderBody = z.object({ name, parent_id: parentId.optional() }).strict();
export const patchFolderBody = z.object({ name, parent_id: parentId }).partial().strict();
/** `parent_id=root` (or `null`) lists top-level folders; absent lists every folder. */
export const listFoldersQuery = z.object({ parent_id: z.string().max(100).optional() }).strict();

export const folder = z
  .object({ id: z.string(), name: z.string(), parent_id: z.string().nullable(), created_at: z.iso.datetime(), updated_at: z.iso.datetime() })
  .meta({ id: 'Folder' });
export const folderList = z.object({ data: z.array(folder) }).meta({ id: 'FolderList' });
