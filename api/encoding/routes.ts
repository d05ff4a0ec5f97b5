import type Router from '@koa/router';
import type { Deps } from '../deps';
import { auth, requireOwner } from '../middleware/auth';
import { parseBody } from '../middleware/validate';
import { normalizeCodecs } from './codecs';
import { patchEncodingDefaultsBody } from './schema';

/** SPEC §21: the workspace's default `codecs`, taken by videos created without their own. */
export function encodingRoutes(r: Router, deps: Deps): void {
  const { db } = deps;
  const readDefaults = async (workspaceId: string) => {
    const w = await db('workspaces').where({ id: workspaceId }).first('default_codecs');
    return { default_codecs: normalizeCodecs(w?.default_codecs as string[] | undefined) };
  };

  r.get('/encoding-defaults', async (ctx) => {
    ctx.body = await readDefaults(auth(ctx).workspaceId);
  });

  // The workspace's settings are the owners' (docs/dashboard.md, "Roles"), as playback defaults are.
  r.patch('/encoding-defaults', async (ctx) => {
    requireOwner(ctx);
    const { workspaceId } = auth(ctx);
    const body = parseBody(ctx, patchEncodingDefaultsBody);
    if (body.default_codecs !== undefined) {
      await db('workspaces').where({ id: workspaceId }).update({ default_codecs: JSON.stringify(normalizeCodecs(body.default_codecs)) });
    }
    ctx.body = await readDefaults(workspaceId);
  });
}
