import type Router from '@koa/router';
import { newId, parseId } from '../../lib/ids';
import type { Deps } from '../deps';
import { notFound } from '../errors';
import { auth } from '../middleware/auth';
import { parseBody } from '../middleware/validate';
import { createTagBody } from './schema';

interface TagRow {
  id: string;
  workspace_id: string;
  name: string;
  created_at: Date;
}

const serialize = (t: Pick<TagRow, 'id' | 'name' | 'created_at'>) => ({ id: t.id, name: t.name, created_at: new Date(t.created_at).toISOString() });

export function tagRoutes(r: Router, deps: Deps): void {
  const { db } = deps;

  r.get('/tags', async (ctx) => {
    const rows = await db<TagRow>('tags').where({ workspace_id: auth(ctx).workspaceId }).orderBy('name').select('id', 'name', 'created_at');
    ctx.body = { data: rows.map(serialize) };
  });

  // Creating a tag that exists is not an error: 200 with the existing tag (201 when new), as
  // PATCH /videos creates tags by name the same way.
  r.post('/tags', async (ctx) => {
    const { workspaceId } = auth(ctx);
    const { name } = parseBody(ctx, createTagBody);
    const inserted = await db<TagRow>('tags')
      .insert({ id: newId('tag'), workspace_id: workspaceId, name })
      .onConflict(['workspace_id', 'name'])
      .ignore()
      .returning(['id', 'name', 'created_at']);
    const row = inserted[0] ?? (await db<TagRow>('tags').where({ workspace_id: workspaceId, name }).first('id', 'name', 'created_at'));
    ctx.status = inserted.length ? 201 : 200;
    ctx.body = serialize(row!);
  });

  // Removes the tag from every video (video_tags cascades).
  r.delete('/tags/:id', async (ctx) => {
    const id = parseId('tag', ctx.params.id);
    const n = id ? await db('tags').where({ id, workspace_id: auth(ctx).workspaceId }).delete() : 0;
    if (!n) throw notFound('Tag');
    ctx.status = 204;
  });
}
