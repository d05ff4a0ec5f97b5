import { z } from 'zod';
import type { Db } from '../../lib/db';
import { newVideoUuid, randomToken } from '../../lib/ids';
import { limitsOf } from '../../lib/plans';
import { keys, sanitizeFilename } from '../../lib/storage';
import { setVideoTags } from '../../lib/tags';
import { enqueueStart } from '../../lib/videos/starts';
import type { VideoSource } from '../../workflows/defs';
import type { AuthState, Deps } from '../deps';
import { assertFolderOf } from '../folders/assert';
import { forbidden } from '../errors';
import { visibility } from './schema';
import type { MaxResolution } from '../../lib/media/cap';
import type { Mp4Support } from '../../lib/outputs/options';

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
  /** SPEC §14 */
  outputs?: { passthrough?: string; max_resolution?: MaxResolution; mp4_support?: Mp4Support; source_video_id?: string };
  source: VideoSource;
  /** For uploads: the kind of upload URL and the origin it answers browsers with (SPEC §13). */
  upload?: { protocol: 'put' | 'tus'; corsOrigin?: string };
}

export interface CreatedVideo {
  id: string;
  storageKey: string;
  filename: string;
  /** Where the upload URL writes: a staging key nothing reads (SPEC §12). */
  uploadKey: string | null;
}

/**
 * Declared sizes of pending uploads count (they are reservations), except uploads that never
 * arrived: an expired upload stops counting. The sum is workspaces.storage_used_bytes, kept by a
 * trigger on videos (migration storage_used_counter). Runs under the workspace's advisory lock, so
 * two concurrent creations cannot both pass a quota that only one fits in (SPEC §12).
 */
async function assertQuota(tx: Db, auth: AuthState, extra: number): Promise<void> {
  const quota = limitsOf(auth.plan).storageBytes;
  await tx.raw('select pg_advisory_xact_lock(hashtext(?))', [`quota:${auth.workspaceId}`]);
  const row = await tx('workspaces').where({ id: auth.workspaceId }).first('storage_used_bytes');
  if (Number(row?.storage_used_bytes ?? 0) + extra > quota) {
    throw forbidden('storage_quota_exceeded', `This upload would exceed the ${auth.plan} plan's storage of ${quota} bytes`);
  }
}

/**
 * Creates the row and, in the same transaction, the start of its workflow (the start outbox,
 * lib/videos/starts.ts); the workflow is started right after the commit, off the request's path.
 * So init costs one transaction, and a video accepted while Temporal is down starts when it is back.
 */
export async function createVideo(deps: Deps, auth: AuthState, v: NewVideo): Promise<CreatedVideo> {
  const { db, config } = deps;
  if (v.folderId) await assertFolderOf(db, auth.workspaceId, v.folderId, 'folder_id');
  const id = newVideoUuid();
  const filename = sanitizeFilename(v.filename);
  const storageKey = keys.original(auth.workspaceId, id, filename);
  const protocol = v.source.kind === 'upload' ? (v.upload?.protocol ?? 'put') : null;
  const uploadKey = protocol ? keys.upload(auth.workspaceId, id, `${protocol}-${randomToken(12)}`) : null;
  await db.transaction(async (tx) => {
    await assertQuota(tx, auth, v.size ?? 0);
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
      passthrough: v.outputs?.passthrough ?? null,
      max_resolution: v.outputs?.max_resolution ?? null,
      mp4_support: v.outputs?.mp4_support ?? 'none',
      source_video_id: v.outputs?.source_video_id ?? null,
      upload_expires_at: v.source.kind === 'upload' ? new Date(Date.now() + config.upload.urlTtlSeconds * 1000) : null,
      upload_key: uploadKey,
      upload_protocol: protocol,
      cors_origin: v.upload?.corsOrigin ?? null,
    });
    if (v.tags?.length) await setVideoTags(tx, auth.workspaceId, id, v.tags);
    await enqueueStart(tx, config, { videoId: id, workspaceId: auth.workspaceId, storageKey, source: v.source, maxResolution: v.outputs?.max_resolution });
  });
  deps.hot.starts.kick(id);
  return { id, storageKey, filename, uploadKey };
}
