import type { Config } from '../config';
import type { Db } from '../db';
import { videoPublicId } from '../ids';
import { STATIC_NAMES } from './options';

export interface StaticRenditionRow {
  video_id: string;
  name: string;
  status: 'processing' | 'ready' | 'failed';
  size_bytes: string | number | null;
}

export interface CaptionRow {
  video_id: string;
  language: string;
  label: string;
  is_default: boolean;
  /** `aligning` and `failed` only for tracks timed from a transcript (POST …/align). */
  status: 'ready' | 'aligning' | 'failed';
  error_code?: string | null;
  error_message?: string | null;
}

export interface AudioTrackRow {
  video_id: string;
  rendition: string;
  language: string;
  name: string;
  is_default: boolean;
  channels: number;
  status: 'pending_upload' | 'processing' | 'ready' | 'failed';
}

export interface VideoOutputs {
  statics: StaticRenditionRow[];
  captions: CaptionRow[];
  /** SPEC §19; absent in rows loaded by code that predates it. */
  audio_tracks?: AudioTrackRow[];
}

/** Static renditions and captions of many videos in two queries (lists must not do N+1). */
export async function loadOutputs(db: Db, ids: string[]): Promise<Map<string, VideoOutputs>> {
  const out = new Map<string, VideoOutputs>(ids.map((id) => [id, { statics: [], captions: [], audio_tracks: [] }]));
  if (ids.length === 0) return out;
  const [statics, captions, audio] = await Promise.all([
    db<StaticRenditionRow>('static_renditions').whereIn('video_id', ids).orderBy(['video_id', 'name']),
    db<CaptionRow>('captions').whereIn('video_id', ids).orderBy(['video_id', 'language']),
    db<AudioTrackRow>('audio_tracks').whereIn('video_id', ids).orderBy(['video_id', 'ordinal', 'rendition']),
  ]);
  for (const s of statics) out.get(s.video_id)?.statics.push(s);
  for (const c of captions) out.get(c.video_id)?.captions.push(c);
  for (const a of audio) out.get(a.video_id)?.audio_tracks?.push(a);
  return out;
}

/** Why a track failed (issue 37: alignment), or null. */
export const captionError = (c: CaptionRow) => (c.status === 'failed' ? { code: c.error_code ?? 'processing_failed', message: c.error_message ?? '' } : null);

export const captionUrl = (config: Config, uuid: string, language: string) => `${config.cdnUrl}/v/${videoPublicId(uuid)}/captions/${language}.vtt`;

/**
 * The static files as reads list them: a file `mp4_support` asks for that has no row yet (it is
 * made after the ladder) is `preparing`, so a client knows one is coming (issue 22).
 */
function staticViews(mp4Support: string, rows: StaticRenditionRow[]): Array<Pick<StaticRenditionRow, 'name' | 'size_bytes'> & { status: StaticRenditionRow['status'] | 'preparing' }> {
  const wanted = mp4Support in STATIC_NAMES ? STATIC_NAMES[mp4Support as keyof typeof STATIC_NAMES] : null;
  if (!wanted || rows.some((r) => r.name === wanted)) return rows;
  return [...rows, { name: wanted, status: 'preparing' as const, size_bytes: null }].sort((a, b) => a.name.localeCompare(b.name));
}

/** The SPEC §14 part of the read shape. */
export function outputFields(
  config: Config,
  row: {
    id: string;
    passthrough?: string | null;
    max_resolution?: string | null;
    mp4_support?: string | null;
    source_video_id?: string | null;
    storyboard_ready?: boolean;
    loudness_lufs?: number | null;
    normalize_audio?: boolean;
  },
  outputs: VideoOutputs | undefined,
  ready: boolean,
) {
  const base = `${config.cdnUrl}/v/${videoPublicId(row.id)}`;
  return {
    passthrough: row.passthrough ?? null,
    max_resolution: row.max_resolution ?? null,
    mp4_support: row.mp4_support ?? 'none',
    source_video_id: row.source_video_id ? videoPublicId(row.source_video_id) : null,
    static_renditions: staticViews(row.mp4_support ?? 'none', outputs?.statics ?? []).map((s) => ({
      name: s.name,
      status: s.status,
      size_bytes: s.size_bytes === null ? null : Number(s.size_bytes),
      url: ready && s.status === 'ready' ? `${base}/download/${s.name}` : null,
    })),
    storyboard_url: ready && row.storyboard_ready ? `${base}/storyboard.vtt` : null,
    captions: (outputs?.captions ?? []).map((c) => ({
      language: c.language,
      label: c.label,
      default: c.is_default,
      status: c.status,
      url: captionUrl(config, row.id, c.language),
      error: captionError(c),
    })),
    // SPEC §19 (docs/audio.md)
    audio_tracks: (outputs?.audio_tracks ?? []).map((a) => ({ language: a.language, name: a.name, default: a.is_default, channels: a.channels, status: a.status })),
    loudness_lufs: row.loudness_lufs == null ? null : Math.round(Number(row.loudness_lufs) * 10) / 10,
    normalize_audio: row.normalize_audio ?? false,
  };
}

export type OutputFields = ReturnType<typeof outputFields>;
