import type Router from '@koa/router';
import type { Knex } from 'knex';
import { newId, parseId } from '../../lib/ids';
import type { Deps } from '../deps';
import { badRequest, notFound } from '../errors';
import { auth, requireOwner } from '../middleware/auth';
import { parseBody, parseQuery } from '../middleware/validate';
import { createRestrictionBody, listRestrictionsQuery, patchPlaybackDefaultsBody, patchRestrictionBody } from './schema';

/**
 * SPEC §20 playback restrictions: referrer allow-lists a video, the workspace's default or a
 * token names. Enforcement is on the key-less surfaces (api/cdn, api/player via lib/protection);
 * changes reach every API process's cached decisions by the triggers of migration
 * 20261125150000 (NOTIFY vidhost_playback).
 */
interface RestrictionRow {
  id: string;
  workspace_id: string;
  allowed_domains: string[];
  allow_no_referrer: boolean;
  created_at: Date;
  updated_at: Date;
}

const serialize = (r: RestrictionRow) => ({
  id: r.id,
  referrer: { allowed_domains: r.allowed_domains, allow_no_referrer: r.allow_no_referrer },
  created_at: new Date(r.created_at).toISOString(),
  updated_at: new Date(r.updated_at).toISOString(),
});

async function findRestriction(db: Knex, workspaceId: string, id: string): Promise<RestrictionRow> {
  const pid = parseId('pr', id);
  const row = pid ? await db<RestrictionRow>('playback_restrictions').where({ id: pid, workspace_id: workspaceId }).first() : undefined;
  if (!row) throw notFound('Playback restriction');
  return row;
}

/** 400 naming `field` unless `id` is a restriction of this workspace (videos, defaults and tokens name one). */
export async function assertRestrictionOf(db: Knex, workspaceId: string, id: string, field: string): Promise<string> {
  const pid = parseId('pr', id);
  const found = pid ? await db('playback_restrictions').where({ id: pid, workspace_id: workspaceId }).first('id') : undefined;
  if (!found) throw badRequest('invalid_parameters', `${field} does not name a playback restriction of this workspace`, [{ field, message: 'not found' }]);
  return found.id;
}

export function restrictionRoutes(r: Router, deps: Deps): void {
  const { db } = deps;

  // Reads are every member's (to pick a restriction for a video); changes are the owners' (a
  // member's session: 403 owner_required; docs/dashboard.md, "Roles").
  r.get('/playback-restrictions', async (ctx) => {
    const { limit, cursor } = parseQuery(ctx, listRestrictionsQuery);
    // pr_ ids are time-ordered (UUIDv7): the id is the keyset.
    const q = db<RestrictionRow>('playback_restrictions').where({ workspace_id: auth(ctx).workspaceId });
    if (cursor) q.where('id', '>', cursor);
    const rows = await q.orderBy('id').limit(limit + 1);
    const page = rows.slice(0, limit);
    ctx.body = { data: page.map(serialize), has_more: rows.length > limit, next_cursor: rows.length > limit ? page[page.length - 1].id : null };
  });

  r.post('/playback-restrictions', async (ctx) => {
    requireOwner(ctx);
    const { workspaceId } = auth(ctx);
    const body = parseBody(ctx, createRestrictionBody);
    const [row] = await db<RestrictionRow>('playback_restrictions')
      .insert({ id: newId('pr'), workspace_id: workspaceId, allowed_domains: body.referrer.allowed_domains, allow_no_referrer: body.referrer.allow_no_referrer })
      .returning('*');
    ctx.status = 201;
    ctx.body = serialize(row);
  });

  r.get('/playback-restrictions/:id', async (ctx) => {
    ctx.body = serialize(await findRestriction(db, auth(ctx).workspaceId, ctx.params.id));
  });

  r.patch('/playback-restrictions/:id', async (ctx) => {
    requireOwner(ctx);
    const { workspaceId } = auth(ctx);
    const found = await findRestriction(db, workspaceId, ctx.params.id);
    const { referrer } = parseBody(ctx, patchRestrictionBody);
    const patch: Partial<RestrictionRow> = {};
    if (referrer.allowed_domains !== undefined) patch.allowed_domains = referrer.allowed_domains;
    if (referrer.allow_no_referrer !== undefined) patch.allow_no_referrer = referrer.allow_no_referrer;
    const [row] = await db<RestrictionRow>('playback_restrictions')
      .where({ id: found.id, workspace_id: workspaceId })
      .update({ ...patch, updated_at: db.fn.now() as unknown as Date })
      .returning('*');
    if (!row) throw notFound('Playback restriction');
    ctx.body = serialize(row);
  });

  // Videos and the default that named it fall back to no restriction (on delete set null).
  r.delete('/playback-restrictions/:id', async (ctx) => {
    requireOwner(ctx);
    const { workspaceId } = auth(ctx);
    const found = await findRestriction(db, workspaceId, ctx.params.id);
    const n = await db('playback_restrictions').where({ id: found.id, workspace_id: workspaceId }).delete();
    if (!n) throw notFound('Playback restriction');
    ctx.status = 204;
  });

  const readDefaults = async (workspaceId: string) => {
    const w = await db('workspaces').where({ id: workspaceId }).first('default_playback_restriction_id', 'default_encryption');
    return { default_playback_restriction_id: w?.default_playback_restriction_id ?? null, default_encryption: w?.default_encryption ?? 'none' };
  };

  r.get('/playback-defaults', async (ctx) => {
    ctx.body = await readDefaults(auth(ctx).workspaceId);
  });

  r.patch('/playback-defaults', async (ctx) => {
    requireOwner(ctx);
    const { workspaceId } = auth(ctx);
    const body = parseBody(ctx, patchPlaybackDefaultsBody);
    const patch: Record<string, unknown> = {};
    if (body.default_playback_restriction_id !== undefined) {
      patch.default_playback_restriction_id =
        body.default_playback_restriction_id === null ? null : await assertRestrictionOf(db, workspaceId, body.default_playback_restriction_id, 'default_playback_restriction_id');
    }
    if (body.default_encryption !== undefined) {
      if (body.default_encryption === 'aes-128') assertEncryptionConfigured(deps, 'default_encryption');
      patch.default_encryption = body.default_encryption;
    }
    if (Object.keys(patch).length > 0) await db('workspaces').where({ id: workspaceId }).update(patch);
    ctx.body = await readDefaults(workspaceId);
  });
}

/** `aes-128` needs a master key (PLAYBACK_KEY_MASTERS); production without one refuses it. */
export function assertEncryptionConfigured(deps: Deps, field: string): void {
  if (deps.config.protection.keys.length === 0) {
    throw badRequest('encryption_not_configured', 'Encrypted playback needs PLAYBACK_KEY_MASTERS on the server', [{ field, message: 'not configured' }]);
  }
}
