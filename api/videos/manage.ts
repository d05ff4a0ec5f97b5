import type Router from '@koa/router';
import { z } from 'zod';
import { mp4Support, passthrough } from '../../lib/outputs/options';
import { requestOutputJobs } from '../../lib/outputs/start';
import { setVideoTags } from '../../lib/tags';
import { loadVideoRow } from '../../lib/videos/read';
import type { Deps } from '../deps';
import { notFound } from '../errors';
import { auth } from '../middleware/auth';
import { parseBody } from '../middleware/validate';
import { tagNames, visibility } from '../upload/schema';
import { fairness } from '../../workflows/priority';
import { assertFolderOf } from '../folders/assert';
import { assertEncryptionConfigured, assertRestrictionOf } from '../restrictions/routes';
import { deleteVideo } from './delete';
import { findVideo } from './find';
import { readVideo } from './routes';

export const patchBody = z
  .object({
    title: z.string().trim().min(1).max(200),
    description: z.string().max(5000).nullable(),
    visibility,
    folder_id: z.string().max(100).nullable(),
    tags: tagNames,
    passthrough: passthrough.nullable(),
    mp4_support: mp4Support,
    playback_restriction_id: z.string().max(100).nullable(),
    encryption: z.enum(['none', 'aes-128']),
  })
  .partial()
  .strict();

export function manageVideoRoutes(r: Router, deps: Deps): void {
  const { db } = deps;

  r.patch('/videos/:id', async (ctx) => {
    const row = await findVideo(ctx, deps, ctx.params.id);
    const body = parseBody(ctx, patchBody);
    const { workspaceId } = auth(ctx);
    if (body.folder_id) await assertFolderOf(db, workspaceId, body.folder_id, 'folder_id');
    if (body.encryption === 'aes-128') assertEncryptionConfigured(deps, 'encryption');
    const patch: Record<string, unknown> = {};
    if (body.title !== undefined) patch.title = body.title;
    if (body.description !== undefined) patch.description = body.description;
    if (body.visibility !== undefined) patch.visibility = body.visibility;
    if (body.folder_id !== undefined) patch.folder_id = body.folder_id;
    if (body.passthrough !== undefined) patch.passthrough = body.passthrough;
    if (body.mp4_support !== undefined) patch.mp4_support = body.mp4_support;
    if (body.playback_restriction_id !== undefined) {
      patch.playback_restriction_id = body.playback_restriction_id && (await assertRestrictionOf(db, workspaceId, body.playback_restriction_id, 'playback_restriction_id'));
    }
    // Encryption is applied by the CDN as it serves (lib/protection): turning it on for a ready
    // video re-packages nothing in storage and needs no encode; it holds from the next request.
    if (body.encryption !== undefined) patch.encryption = body.encryption;
    const changed = await db.transaction(async (tx) => {
      const n = await tx('videos')
        .where({ id: row.id })
        .whereNull('deleted_at')
        .update({ ...patch, updated_at: tx.fn.now() });
      if (n && body.tags) await setVideoTags(tx, workspaceId, row.id, body.tags);
      return n > 0;
    });
    const fresh = changed ? await loadVideoRow(db, row.id, workspaceId) : undefined;
    if (!fresh) throw notFound('Video');
    // A ready video gets (or loses) its downloads now; one still processing gets them after its ladder.
    if (body.mp4_support !== undefined && body.mp4_support !== row.mp4_support && fresh.status === 'ready') {
      await requestOutputJobs(deps.temporal, deps.config, { videoId: row.id, workspaceId, jobs: ['static'], fair: fairness(workspaceId, auth(ctx).plan) });
    }
    ctx.body = await readVideo(deps, fresh);
  });

  r.delete('/videos/:id', async (ctx) => {
    const row = await findVideo(ctx, deps, ctx.params.id);
    if (!(await deleteVideo(deps, row, ctx.state.log))) throw notFound('Video');
    ctx.status = 204;
  });
}
