import { z } from 'zod';
import { newVideoUuid } from '../../lib/ids';
import { limitsOf } from '../../lib/plans';
import { keys, sanitizeFilename } from '../../lib/storage';
import { setVideoTags } from '../../lib/tags';
import { startVideoWorkflow } from '../../lib/videos/workflow';
import type { VideoSource } from '../../workflows/defs';
import type { AuthState, Deps } from '../deps';
import { assertFolderOf } from '../folders/assert';
import { forbidden, unavailable } from '../errors';
import { visibility } from './schema';

export interface NewVideo {
  filename: string;
  contentType: string | null;
  size: number | null;
  title?: string;
  description?: string;
  visibility?: z.infer<typeof visibility>;
  folderId?: string | null;
  tags?: string[];
  sourceUrl?: string;
  source: VideoSource;
}

async function assertQuota(deps: Deps, auth: AuthState, extra: number): Promise<void> {
  const quota = limitsOf(auth.plan).storageBytes;
  const [{ used }] = await deps.db('videos').where({ workspace_id: auth.workspaceId }).whereNull('deleted_at').sum({ used: 'size_bytes' });
  if (Number(used ?? 0) + extra > quota) {
    throw forbidden('storage_quota_exceeded', `This upload would exceed the ${auth.plan} plan's storage of ${quota} bytes`);
  }
}

/**
 * Creates the row and starts the video's workflow. If Temporal refuses, the row is removed again
 * so that no video exists without its workflow.
 */
export async function createVideo(deps: Deps, auth: AuthState, v: NewVideo): Promise<{ id: string; storageKey: string; filename: string }> {
  const { db, config } = deps;
  if (v.folderId) await assertFolderOf(db, auth.workspaceId, v.folderId, 'folder_id');
  await assertQuota(deps, auth, v.size ?? 0);
  const id = newVideoUuid();
  const filename = sanitizeFilename(v.filename);
  const storageKey = keys.original(auth.workspaceId, id, filename);
  await db.transaction(async (tx) => {
    await tx('videos').insert({
      id,
      workspace_id: auth.workspaceId,
      title: v.title ?? (filename.replace(/\.[^.]*$/, '') || filename),
      description: v.description ?? null,
      visibility: v.visibility ?? 'unlisted',
      status: v.source.kind === 'upload' ? 'pending_upload' : 'processing',
      filename,
      content_type: v.contentType,
      size_bytes: v.size,
      storage_key: storageKey,
      source_url: v.sourceUrl ?? null,
      folder_id: v.folderId ?? null,
      upload_expires_at: v.source.kind === 'upload' ? new Date(Date.now() + config.upload.urlTtlSeconds * 1000) : null,
    });
    if (v.tags?.length) await setVideoTags(tx, auth.workspaceId, id, v.tags);
  });
  try {
    await startVideoWorkflow(deps.temporal, config, { videoId: id, workspaceId: auth.workspaceId, storageKey, source: v.source });
  } catch (err) {
    await db('videos').where({ id }).delete();
    deps.log.error({ err }, 'could not start the video workflow');
    throw unavailable();
  }
  return { id, storageKey, filename };
}
