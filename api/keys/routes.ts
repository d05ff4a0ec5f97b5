import type Router from '@koa/router';
import { parseId } from '../../lib/ids';
import { createApiKey, toRecord } from '../../lib/keys';
import type { Deps } from '../deps';
import { conflict, forbidden, notFound } from '../errors';
import { auth, requireFull, requireOwner } from '../middleware/auth';
import { parseBody } from '../middleware/validate';
import { createKeyBody } from './schema';

/**
 * Managing keys is itself full access, reads included: a read key must not list the others.
 * Keys are an owner's to manage; a member may list them and make and revoke read keys of their
 * own (docs/dashboard.md, "Roles"). Every key records who made it: their removal revokes it.
 */
export function keyRoutes(r: Router, deps: Deps): void {
  const { db } = deps;

  r.get('/api-keys', async (ctx) => {
    requireFull(ctx);
    const rows = await db('api_keys').where({ workspace_id: auth(ctx).workspaceId }).whereNull('revoked_at').orderBy([{ column: 'created_at' }, { column: 'id' }]);
    ctx.body = { data: rows.map(toRecord) };
  });

  // The secret is in this answer and nowhere else, ever; only its hash is stored.
  r.post('/api-keys', async (ctx) => {
    requireFull(ctx);
    const body = parseBody(ctx, createKeyBody);
    if (body.access === 'full') requireOwner(ctx);
    const a = auth(ctx);
    ctx.status = 201;
    ctx.body = await createApiKey(db, a.workspaceId, body.access, body.name, a.personId ?? null);
  });

  // A key may revoke itself (rotation: create the new key, then revoke the old one with itself),
  // but never the workspace's last full-access key, which would lock the workspace out.
  r.delete('/api-keys/:id', async (ctx) => {
    requireFull(ctx);
    const { workspaceId } = auth(ctx);
    const id = parseId('key', ctx.params.id);
    if (!id) throw notFound('API key');
    await db.transaction(async (tx): Promise<string> => {
      // Serialises revocations per workspace, so two at once cannot both pass the last-key check.
      await tx('workspaces').where({ id: workspaceId }).forUpdate().first('id');
      const key = await tx('api_keys').where({ id, workspace_id: workspaceId }).whereNull('revoked_at').first('id', 'access', 'created_by');
      if (!key) throw notFound('API key');
      if (auth(ctx).role === 'member' && key.created_by !== auth(ctx).personId) throw forbidden('owner_required', 'A member may revoke only keys they made');
      if (key.access === 'full') {
        const [{ n }] = await tx('api_keys').where({ workspace_id: workspaceId, access: 'full' }).whereNull('revoked_at').count({ n: '*' });
        if (Number(n) <= 1) throw conflict('last_full_key', "This is the workspace's last full-access key; create another before revoking it");
      }
      const [revoked] = await tx('api_keys').where({ id }).update({ revoked_at: tx.fn.now() }).returning('key_hash');
      return revoked.key_hash as string;
    }).then((hash) => deps.hot.keys.forget(hash));
    ctx.status = 204;
  });
}
