import type Router from '@koa/router';
import type { Knex } from 'knex';
import { newId, parseId } from '../../lib/ids';
import type { Deps } from '../deps';
import { badRequest, notFound } from '../errors';
import { auth } from '../middleware/auth';
import { parseBody, parseQuery } from '../middleware/validate';
import { assertFolderOf } from './assert';
import { createFolderBody, listFoldersQuery, patchFolderBody } from './schema';

interface FolderRow {
  id: string;
  workspace_id: string;
  name: string;
  parent_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const serialize = (f: FolderRow) => ({
  id: f.id,
  name: f.name,
  parent_id: f.parent_id,
  created_at: new Date(f.created_at).toISOString(),
  updated_at: new Date(f.updated_at).toISOString(),
});

async function findFolder(db: Knex, workspaceId: string, id: string): Promise<FolderRow> {
  const fid = parseId('fld', id);
  const row = fid ? await db<FolderRow>('folders').where({ id: fid, workspace_id: workspaceId }).first() : undefined;
  if (!row) throw notFound('Folder');
  return row;
}

/** True when `ancestorId` is `folderId` or one of its ancestors. */
async function isAncestorOrSelf(db: Knex, ancestorId: string, folderId: string): Promise<boolean> {
  const { rows } = await db.raw(
    `with recursive up(id, parent_id) as (
       select id, parent_id from folders where id = ?
       union
       select f.id, f.parent_id from folders f join up on f.id = up.parent_id
     )
     select 1 from up where id = ? limit 1`,
    [folderId, ancestorId],
  );
  return rows.length > 0;
}

/**
 * Moves and deletions of one workspace's folders run one at a time, so two concurrent moves cannot
 * each pass the cycle check and together make a loop.
 */
const lockTree = (tx: Knex, workspaceId: string) => tx.raw(`select pg_advisory_xact_lock(hashtext('folders:' || ?))`, [workspaceId]);

export function folderRoutes(r: Router, deps: Deps): void {
  const { db } = deps;

  r.get('/folders', async (ctx) => {
    const { parent_id } = parseQuery(ctx, listFoldersQuery);
    const q = db<FolderRow>('folders').where({ workspace_id: auth(ctx).workspaceId });
    if (parent_id === 'root' || parent_id === 'null' || parent_id === '') q.whereNull('parent_id');
    else if (parent_id) q.where({ parent_id });
    const rows = await q.orderBy([{ column: 'name' }, { column: 'id' }]);
    ctx.body = { data: rows.map(serialize) };
  });

  r.post('/folders', async (ctx) => {
    const { workspaceId } = auth(ctx);
    const body = parseBody(ctx, createFolderBody);
    if (body.parent_id) await assertFolderOf(db, workspaceId, body.parent_id, 'parent_id');
    const [row] = await db<FolderRow>('folders')
      .insert({ id: newId('fld'), workspace_id: workspaceId, name: body.name, parent_id: body.parent_id ?? null })
      .returning('*');
    ctx.status = 201;
    ctx.body = serialize(row);
  });

  r.get('/folders/:id', async (ctx) => {
    ctx.body = serialize(await findFolder(db, auth(ctx).workspaceId, ctx.params.id));
  });

  r.patch('/folders/:id', async (ctx) => {
    const { workspaceId } = auth(ctx);
    const folder = await findFolder(db, workspaceId, ctx.params.id);
    const body = parseBody(ctx, patchFolderBody);
    const row = await db.transaction(async (tx) => {
      if (body.parent_id) {
        await lockTree(tx, workspaceId);
        await assertFolderOf(tx, workspaceId, body.parent_id, 'parent_id');
        if (await isAncestorOrSelf(tx, folder.id, body.parent_id)) {
          throw badRequest('folder_cycle', 'A folder cannot be moved into itself or one of its subfolders');
        }
      }
      const patch: Partial<FolderRow> = {};
      if (body.name !== undefined) patch.name = body.name;
      if (body.parent_id !== undefined) patch.parent_id = body.parent_id;
      const [updated] = await tx<FolderRow>('folders')
        .where({ id: folder.id, workspace_id: workspaceId })
        .update({ ...patch, updated_at: tx.fn.now() as unknown as Date })
        .returning('*');
      return updated;
    });
    if (!row) throw notFound('Folder');
    ctx.body = serialize(row);
  });

  // Videos in the folder go to the root (SPEC §8); its subfolders move up to its parent, so
  // deleting a folder never deletes anything else.
  r.delete('/folders/:id', async (ctx) => {
    const { workspaceId } = auth(ctx);
    const folder = await findFolder(db, workspaceId, ctx.params.id);
    await db.transaction(async (tx) => {
      await lockTree(tx, workspaceId);
      const current = await tx<FolderRow>('folders').where({ id: folder.id }).first();
      if (!current) throw notFound('Folder');
      await tx('folders').where({ parent_id: folder.id }).update({ parent_id: current.parent_id, updated_at: tx.fn.now() });
      await tx('videos').where({ folder_id: folder.id }).update({ folder_id: null, updated_at: tx.fn.now() });
      await tx('folders').where({ id: folder.id }).delete();
    });
    ctx.status = 204;
  });
}
