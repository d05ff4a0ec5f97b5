import type Router from '@koa/router';
import { z } from 'zod';
import { mp4Support, passthrough } from '../../lib/outputs/options';
import { requestOutputJobs } from '../../lib/outputs/start';
import { setVideoTags } from '../../lib/tags';
import { loadVideoRow, type VideoRow } from '../../lib/videos/read';
import { videoWorkflowOptions } from '../../lib/videos/workflow';
import { deleteVideoSignal, type VideoSource } from '../../workflows/defs';
import type { Deps } from '../deps';
import { notFound, unavailable } from '../errors';
import { auth } from '../middleware/auth';
import { parseBody } from '../middleware/validate';
import { tagNames, visibility } from '../upload/schema';
import { assertFolderOf } from '../folders/assert';
import { assertEncryptionConfigured, assertRestrictionOf } from '../restrictions/routes';
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

/** The input a video's workflow would have been started with, for a deletion that must start it again. */
function reconstructInput(deps: Deps, row: VideoRow): VideoSource {
  if (row.source_url) return { kind: 'url', url: row.source_url };
  const { upload } = deps.config;
  return {
    kind: 'upload',
    declaredSize: row.size_bytes ?? 0,
    contentType: row.content_type ?? 'application/octet-stream',
    uploadTimeoutMs: (upload.urlTtlSeconds + upload.graceSeconds) * 1000,
  };
}

/**
 * Hands the deletion to the video's workflow, which cancels in-flight work, removes the files and
 * then the row. signalWithStart signals a running workflow, and starts one to do the deletion when
 * none runs (terminated by an operator, say), so the files never outlive the request.
 */
async function requestDeletion(deps: Deps, row: VideoRow): Promise<void> {
  const { config, temporal } = deps;
  await temporal.workflow.signalWithStart('videoWorkflow', {
    ...videoWorkflowOptions(config.temporal, { videoId: row.id, workspaceId: row.workspace_id, storageKey: row.storage_key, source: reconstructInput(deps, row) }, 'deleting'),
    signal: deleteVideoSignal,
    signalArgs: [],
  });
}

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
      await requestOutputJobs(deps.temporal, deps.config, { videoId: row.id, workspaceId, jobs: ['static'] });
    }
    ctx.body = await readVideo(deps, fresh);
  });

  r.delete('/videos/:id', async (ctx) => {
    const row = await findVideo(ctx, deps, ctx.params.id);
    // Hidden at once: every read filters on deleted_at, so the video is a 404 from here on.
    const n = await db('videos').where({ id: row.id }).whereNull('deleted_at').update({ deleted_at: db.fn.now() });
    if (!n) throw notFound('Video');
    try {
      await requestDeletion(deps, row);
    } catch (err) {
      // Without the workflow nobody would remove the files: show the video again and say so.
      await db('videos').where({ id: row.id }).update({ deleted_at: null });
      ctx.state.log?.error({ err, videoId: row.id }, 'could not hand the deletion to the workflow');
      throw unavailable();
    }
    ctx.status = 204;
  });
}
