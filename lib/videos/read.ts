import type { Config } from '../config';
import type { Db } from '../db';
import { videoPublicId } from '../ids';
import type { RenditionState, VideoState } from '../../workflows/video/defs';
import { type OutputFields, outputFields, type VideoOutputs } from '../outputs/read';
import { type OnRequestEntry, type PassthroughEntry, passthroughView } from '../outputs/passthrough';

export interface VideoRow {
  id: string;
  workspace_id: string;
  title: string;
  description: string | null;
  visibility: 'public' | 'unlisted' | 'private';
  status: 'pending_upload' | 'processing' | 'ready' | 'failed';
  progress: number;
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  size_bytes: number | null;
  filename: string;
  content_type: string | null;
  storage_key: string;
  source_url: string | null;
  error_code: string | null;
  error_message: string | null;
  folder_id: string | null;
  thumbnail_ready: boolean;
  upload_expires_at: Date | null;
  upload_key: string | null;
  upload_protocol: 'put' | 'tus' | null;
  cors_origin: string | null;
  upload_closed_at: Date | null;
  created_at: Date;
  updated_at: Date;
  ready_at: Date | null;
  deleted_at: Date | null;
  passthrough: string | null;
  max_resolution: string | null;
  mp4_support: string;
  source_video_id: string | null;
  storyboard_ready: boolean;
  /** SPEC §21 (absent on rows read before the column existed). */
  codecs?: Array<'h264' | 'hevc' | 'av1'>;
  /** The DASH manifest is written (publishDash): `dash_url` is shown from then on (SPEC §23). */
  dash_ready?: boolean;
  normalize_audio: boolean;
  loudness_lufs: number | null;
  audio_layout: string | null;
  passthrough_rendition: PassthroughEntry | null;
  /** SPEC §23 second round: the rungs the master lists while their segments are encoded on request (issue 47). */
  on_request_renditions?: OnRequestEntry[] | null;
  derived_bytes: number | string;
  /** SPEC §20 */
  playback_restriction_id: string | null;
  encryption: 'none' | 'aes-128' | null;
  live_stream_id: string | null;
  is_live: boolean;
  /** SPEC §24 (absent on rows read before the column existed). */
  watermark_id?: string | null;
}

export interface RenditionRow {
  video_id: string;
  name: string;
  ordinal: number;
  width: number;
  height: number;
  bitrate: number;
  status: RenditionState['status'];
  progress: number;
  ssim_db?: number | null;
  psnr_db?: number | null;
}

export interface VideoRead extends OutputFields {
  id: string;
  video_id: string;
  uuid: string;
  workspace_id: string;
  title: string;
  description: string | null;
  visibility: string;
  status: string;
  progress: number;
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  size_bytes: number | null;
  filename: string;
  content_type: string | null;
  storage_key: string;
  hls_url: string | null;
  thumbnail_url: string | null;
  embed_url: string | null;
  renditions: Array<{ name: string; width: number; height: number; bitrate: number; status: string; progress: number; quality: RenditionQuality | null }>;
  codecs: Array<'h264' | 'hevc' | 'av1'>;
  dash_url: string | null;
  error_message?: string | null;
  error_code?: string | null;
  folder_id: string | null;
  tags: string[];
  created_at: string;
  updated_at: string;
  ready_at: string | null;
  playback_restriction_id: string | null;
  encryption: 'none' | 'aes-128';
  live_stream_id: string | null;
  is_live: boolean;
  watermark_id: string | null;
}

/** A rendition as reads show it. */
export type RenditionView = Pick<RenditionRow, 'name' | 'width' | 'height' | 'bitrate' | 'status' | 'progress' | 'ssim_db' | 'psnr_db'>;

/** Measured quality against the source scaled to the rung (SPEC §21); null until measured. */
export type RenditionQuality = { ssim_db: number; psnr_db: number };

function qualityOf(r: { ssim_db?: number | null; psnr_db?: number | null }): RenditionQuality | null {
  return r.ssim_db != null && r.psnr_db != null ? { ssim_db: Number(r.ssim_db), psnr_db: Number(r.psnr_db) } : null;
}

/** A row with its renditions (by ordinal) and tag names (by name), as one query returns them. */
export type VideoWithRelations = VideoRow & { renditions: RenditionView[]; tags: string[]; created_at_text: string } & VideoOutputs;

/**
 * Select list for `videos as v` that brings renditions and tags along as JSON (one round trip for
 * a read or a whole page), and created_at as text with microseconds for cursors.
 */
export const VIDEO_WITH_RELATIONS = `v.*,
  to_char(v.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at_text,
  coalesce((select json_agg(json_build_object('name', r.name, 'width', r.width, 'height', r.height, 'bitrate', r.bitrate,
                                              'status', r.status, 'progress', r.progress, 'ssim_db', r.ssim_db, 'psnr_db', r.psnr_db) order by r.ordinal)
              from renditions r where r.video_id = v.id), '[]'::json) as renditions,
  coalesce((select json_agg(t.name order by t.name)
              from video_tags vt join tags t on t.id = vt.tag_id where vt.video_id = v.id), '[]'::json) as tags,
  coalesce((select json_agg(json_build_object('video_id', s.video_id, 'name', s.name, 'status', s.status, 'size_bytes', s.size_bytes) order by s.name)
              from static_renditions s where s.video_id = v.id), '[]'::json) as statics,
  coalesce((select json_agg(json_build_object('video_id', c.video_id, 'language', c.language, 'label', c.label, 'is_default', c.is_default,
                                              'status', c.status, 'error_code', c.error_code, 'error_message', c.error_message) order by c.language)
              from captions c where c.video_id = v.id), '[]'::json) as captions,
  coalesce((select json_agg(json_build_object('video_id', a.video_id, 'rendition', a.rendition, 'language', a.language, 'name', a.name,
                                              'is_default', a.is_default, 'channels', a.channels, 'status', a.status) order by a.ordinal, a.rendition)
              from audio_tracks a where a.video_id = v.id), '[]'::json) as audio_tracks`;

/** One workspace's live video with its relations, in one query. */
export async function loadVideoWithRelations(db: Db, uuid: string, workspaceId: string): Promise<VideoWithRelations | undefined> {
  return db('videos as v').select(db.raw(VIDEO_WITH_RELATIONS)).where({ 'v.id': uuid, 'v.workspace_id': workspaceId }).whereNull('v.deleted_at').first();
}

export async function loadVideoRow(db: Db, uuid: string, workspaceId?: string, opts: { includeDeleted?: boolean } = {}): Promise<VideoRow | undefined> {
  const q = db<VideoRow>('videos').where({ id: uuid });
  if (workspaceId) q.andWhere({ workspace_id: workspaceId });
  if (!opts.includeDeleted) q.whereNull('deleted_at');
  return q.first();
}

/** Renditions and tags for many videos in two queries (lists must not do N+1). */
export async function loadRelations(db: Db, ids: string[]): Promise<{ renditions: Map<string, RenditionRow[]>; tags: Map<string, string[]> }> {
  const renditions = new Map<string, RenditionRow[]>();
  const tags = new Map<string, string[]>();
  if (ids.length === 0) return { renditions, tags };
  const [rr, tr] = await Promise.all([
    db<RenditionRow>('renditions').whereIn('video_id', ids).orderBy(['video_id', 'ordinal']),
    db('video_tags as vt').join('tags as t', 't.id', 'vt.tag_id').whereIn('vt.video_id', ids).orderBy('t.name').select('vt.video_id', 't.name'),
  ]);
  for (const r of rr) renditions.set(r.video_id, [...(renditions.get(r.video_id) ?? []), r]);
  for (const t of tr as Array<{ video_id: string; name: string }>) tags.set(t.video_id, [...(tags.get(t.video_id) ?? []), t.name]);
  return { renditions, tags };
}

/** Once the ladder is planned, progress is the renditions' average; the row's column covers the time before. */
function progressOf(row: VideoRow, renditions: RenditionView[]): number {
  if (renditions.length === 0) return row.progress;
  return Math.round(renditions.reduce((sum, r) => sum + (r.status === 'ready' ? 100 : r.progress), 0) / renditions.length);
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/**
 * The read shape of SPEC §3. `live` is the workflow's query answer, which is fresher than the
 * row while the video is being processed.
 */
export function serializeVideo(
  config: Config,
  row: VideoRow,
  renditions: RenditionView[],
  tags: string[],
  live?: VideoState,
  outputs?: VideoOutputs,
): VideoRead {
  const status = live?.status ?? row.status;
  const publicId = videoPublicId(row.id);
  const ready = status === 'ready';
  // The workflow's state is fresher for status and progress; measurements land on the rows.
  const measured = new Map(renditions.map((r) => [r.name, r]));
  const rends = live?.renditions.length
    ? live.renditions.map((r) => ({
        name: r.name,
        width: r.width,
        height: r.height,
        bitrate: measured.get(r.name)?.bitrate ?? r.bitrate,
        status: r.status,
        progress: r.progress,
        quality: r.quality ?? qualityOf(measured.get(r.name) ?? {}),
      }))
    : renditions.map((r) => ({ name: r.name, width: r.width, height: r.height, bitrate: r.bitrate, status: r.status, progress: r.progress, quality: qualityOf(r) }));
  // The passthrough the master lists: the rendition the video plays from until the ladder lands.
  const source = passthroughView(row.passthrough_rendition);
  if (source && !rends.some((r) => r.name === source.name)) rends.push({ ...source, quality: null });
  const out: VideoRead = {
    id: publicId,
    video_id: publicId,
    uuid: row.id,
    workspace_id: row.workspace_id,
    title: row.title,
    description: row.description,
    visibility: row.visibility,
    status,
    progress: live ? live.progress : progressOf(row, renditions),
    duration_seconds: row.duration_seconds,
    width: row.width,
    height: row.height,
    size_bytes: row.size_bytes,
    filename: row.filename,
    content_type: row.content_type,
    storage_key: row.storage_key,
    hls_url: ready ? `${config.cdnUrl}/v/${publicId}/master.m3u8` : null,
    thumbnail_url: ready ? `${config.cdnUrl}/v/${publicId}/thumbnail.jpg` : null,
    embed_url: ready ? `${config.playerUrl}/embed/${publicId}` : null,
    renditions: rends,
    codecs: row.codecs ?? ['h264'],
    // An encrypted video has no DASH (docs/protection.md, "CMAF renditions").
    dash_url: ready && row.dash_ready && row.encryption !== 'aes-128' && (row.codecs ?? []).some((c) => c !== 'h264') ? `${config.cdnUrl}/v/${publicId}/manifest.mpd` : null,
    folder_id: row.folder_id,
    tags,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    ready_at: iso(row.ready_at),
    playback_restriction_id: row.playback_restriction_id ?? null,
    encryption: row.encryption ?? 'none',
    ...outputFields(config, row, outputs, ready),
    live_stream_id: row.live_stream_id ?? null,
    is_live: row.is_live ?? false,
    watermark_id: row.watermark_id ?? null,
  };
  if (status === 'failed') {
    out.error_code = live?.errorCode ?? row.error_code;
    out.error_message = live?.errorMessage ?? row.error_message;
  }
  return out;
}
