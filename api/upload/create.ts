import type { Knex } from 'knex';
import { z } from 'zod';
import { newId, newVideoUuid, randomToken } from '../../lib/ids';
import { limitsOf } from '../../lib/plans';
import { keys, sanitizeFilename } from '../../lib/storage';
import { uniqueTagNames } from '../../lib/tags';
import { pendingStart } from '../../lib/videos/starts';
import { fairness } from '../../workflows/priority';
import type { VideoSource } from '../../workflows/video/defs';
import type { AuthState, Deps } from '../deps';
import { codecsForNewVideo } from '../encoding/codecs';
import { assertFolderOf } from '../folders/assert';
import { forbidden } from '../errors';
import { assertEncryptionConfigured, assertRestrictionOf } from '../restrictions/routes';
import { watermarkForNew } from '../watermarks/assert';
import { visibility, type videoMeta } from './schema';
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
  outputs?: { passthrough?: string; max_resolution?: MaxResolution; mp4_support?: Mp4Support; source_video_id?: string; normalize_audio?: boolean };
  /** SPEC §21: H.264 plus any of hevc/av1 (absent: the workspace's default). */
  codecs?: Array<'h264' | 'hevc' | 'av1'>;
  source: VideoSource;
  /** SPEC §20: the video's restriction and encryption (absent: the workspace's defaults). */
  protection?: { playback_restriction_id?: string | null; encryption?: 'none' | 'aes-128' };
  /** SPEC §24: the profile named at creation (validated; null: none; absent: the workspace's default). */
  watermarkId?: string | null;
  /** A clip's: its source's mark, taken as it is (even a profile deleted since). */
  inheritedWatermarkId?: string | null;
  /** For uploads: the kind of upload URL and the origin it answers browsers with (SPEC §13). */
  upload?: { protocol: 'put' | 'tus'; corsOrigin?: string };
}

/** The creation metadata every upload form accepts (`videoMeta`), as the fields of a NewVideo. */
export function metaFields(body: z.output<z.ZodObject<typeof videoMeta>>): Pick<NewVideo, 'title' | 'description' | 'visibility' | 'folderId' | 'tags' | 'outputs' | 'codecs' | 'protection' | 'watermarkId'> {
  return {
    title: body.title,
    description: body.description,
    visibility: body.visibility,
    folderId: body.folder_id,
    tags: body.tags,
    outputs: { passthrough: body.passthrough, max_resolution: body.max_resolution, mp4_support: body.mp4_support, normalize_audio: body.normalize_audio },
    codecs: body.codecs,
    protection: { playback_restriction_id: body.playback_restriction_id, encryption: body.encryption },
    watermarkId: body.watermark_id,
  };
}

export interface CreatedVideo {
  id: string;
  storageKey: string;
  filename: string;
  /** Where the upload URL writes: a staging key nothing reads (SPEC §12). */
  uploadKey: string | null;
}

/** SQLSTATE of vidhost_create_video's refusal: the new video would exceed the storage quota. */
const QUOTA_EXCEEDED = 'VH001';

/**
 * Creates the video, its tags and its workflow's start (the start outbox, lib/videos/starts.ts)
 * in one statement, vidhost_create_video (migration create_video_function), then has the start
 * made right after, off the request's path: init costs one round trip, and a video accepted while
 * Temporal is down starts when it is back.
 *
 * The storage quota: declared sizes of pending uploads count (they are reservations), except
 * uploads that never arrived: an expired upload stops counting. The sum is
 * workspaces.storage_used_bytes, kept by a trigger on videos; the function reads it after its
 * insert, holding the workspace's row, so two concurrent creations cannot both pass a quota that
 * only one fits in (SPEC §12), and the row is held only while the statement runs.
 *
 * `within`: made in the caller's transaction (which holds a lock the creation is judged under,
 * SPEC §25 job bounds); the start is kicked once it commits.
 */
export async function createVideo(deps: Deps, auth: AuthState, v: NewVideo, within?: Knex.Transaction): Promise<CreatedVideo> {
  const { config } = deps;
  const db = within ?? deps.db;
  if (v.folderId) await assertFolderOf(db, auth.workspaceId, v.folderId, 'folder_id');
  const restrictionId = v.protection?.playback_restriction_id
    ? await assertRestrictionOf(db, auth.workspaceId, v.protection.playback_restriction_id, 'playback_restriction_id')
    : null;
  if (v.protection?.encryption === 'aes-128') assertEncryptionConfigured(deps, 'encryption');
  const watermarkId = v.inheritedWatermarkId !== undefined ? v.inheritedWatermarkId : await watermarkForNew(db, auth.workspaceId, v.watermarkId);
  const id = newVideoUuid();
  const filename = sanitizeFilename(v.filename);
  const storageKey = keys.original(auth.workspaceId, id, filename);
  const protocol = v.source.kind === 'upload' ? (v.upload?.protocol ?? 'put') : null;
  // Its own codecs, else the workspace's default (SPEC §21); H.264 always, first.
  const codecs = await codecsForNewVideo(db, auth.workspaceId, v.codecs);
  const uploadKey = protocol ? keys.upload(auth.workspaceId, id, `${protocol}-${randomToken(12)}`) : null;
  const row = {
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
    codecs,
    source_video_id: v.outputs?.source_video_id ?? null,
    normalize_audio: v.outputs?.normalize_audio ?? false,
    upload_expires_at: v.source.kind === 'upload' ? new Date(Date.now() + config.upload.urlTtlSeconds * 1000).toISOString() : null,
    upload_key: uploadKey,
    upload_protocol: protocol,
    cors_origin: v.upload?.corsOrigin ?? null,
    playback_restriction_id: restrictionId,
    // null: the workspace's default, filled in by a trigger (migration 20261125150000).
    encryption: v.protection?.encryption ?? null,
    watermark_id: watermarkId,
  };
  const tags = uniqueTagNames(v.tags ?? []).map((name) => ({ id: newId('tag'), name }));
  const quota = limitsOf(auth.plan).storageBytes;
  const start = pendingStart(config, {
    videoId: id,
    workspaceId: auth.workspaceId,
    storageKey,
    source: v.source,
    maxResolution: v.outputs?.max_resolution,
    ...(codecs.length > 1 ? { codecs } : {}),
    ...(watermarkId ? { watermarked: true } : {}),
  }, fairness(auth.workspaceId, auth.plan));
  try {
    await db.raw('select vidhost_create_video(?::jsonb, ?::jsonb, ?, ?, ?::jsonb, ?)', [JSON.stringify(row), JSON.stringify(tags), quota, start.target, JSON.stringify(start.start), start.leaseMs]);
  } catch (err) {
    if ((err as { code?: string }).code === QUOTA_EXCEEDED) {
      throw forbidden('storage_quota_exceeded', `This upload would exceed the ${auth.plan} plan's storage of ${quota} bytes`);
    }
    throw err;
  }
  const kick = () => deps.hot.starts.kick(id, start.start);
  if (within) within.executionPromise.then(kick, () => undefined);
  else kick();
  return { id, storageKey, filename, uploadKey };
}
