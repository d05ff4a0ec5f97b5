import type { Config } from '../config';
import type { Db } from '../db';
import { videoPublicId } from '../ids';
import type { EdgeStreamStats } from './edge';
import { healthWarnings, type StreamHealth } from './health';

export interface SimulcastTarget {
  url: string;
  stream_key?: string;
}

export interface NewVideoSettings {
  visibility?: 'public' | 'unlisted' | 'private';
  folder_id?: string | null;
  tags?: string[];
  mp4_support?: 'none' | 'capped_1080p' | 'audio_only';
  passthrough?: string;
}

export interface LiveStreamRow {
  id: string;
  workspace_id: string;
  title: string;
  visibility: 'public' | 'unlisted' | 'private';
  latency_mode: 'standard' | 'low';
  reconnect_window: number;
  record: boolean;
  new_video_settings: NewVideoSettings;
  simulcast_targets: SimulcastTarget[];
  simulcast_status?: Record<string, { status: string; error: string | null }>;
  passthrough: string | null;
  /** SPEC §20: the stream's own restriction; null → the workspace's default. */
  playback_restriction_id: string | null;
  /** SPEC §20: copied to each recording; the CDN encrypts the live segments with its key. */
  encryption: 'none' | 'aes-128' | null;
  /** SPEC §24: the mark every broadcast is burnt with (fixed at creation); null: none. */
  watermark_id?: string | null;
  stream_key_hash: string;
  status: 'idle' | 'active' | 'disconnected';
  disabled: boolean;
  active_video_id: string | null;
  last_disconnect_reason: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
  /** SPEC §22: the measure of the broadcast going on (activities/live/health.ts). */
  health?: (Partial<StreamHealth> & { measured_at?: string }) | null;
  /** created_at as text with microseconds, for cursors (list queries select it). */
  created_at_text?: string;
}

export const LIVE_SELECT = `l.*, to_char(l.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at_text`;

export async function loadLiveStream(db: Db, id: string, workspaceId?: string): Promise<LiveStreamRow | undefined> {
  const q = db('live_streams as l').select(db.raw(LIVE_SELECT)).where('l.id', id).whereNull('l.deleted_at');
  if (workspaceId) q.andWhere('l.workspace_id', workspaceId);
  return q.first();
}

/** The last recordings of each stream, newest first (one query for a page). */
export async function recentVideoIds(db: Db, ids: string[], per = 10): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!ids.length) return out;
  const { rows } = await db.raw(
    `select live_stream_id, id from (
       select live_stream_id, id, row_number() over (partition by live_stream_id order by created_at desc) as n
         from videos where live_stream_id = any(?) and deleted_at is null) r
     where n <= ?`,
    [ids, per],
  );
  for (const r of rows as Array<{ live_stream_id: string; id: string }>) out.set(r.live_stream_id, [...(out.get(r.live_stream_id) ?? []), videoPublicId(r.id)]);
  return out;
}

export const rtmpUrl = (config: Config) => `rtmp://${config.live.publicIngestHost}:${config.live.rtmpPort}/live`;
export const srtUrl = (config: Config, key: string) => `srt://${config.live.publicIngestHost}:${config.live.srtPort}?streamid=${key}`;
export const liveHlsUrl = (config: Config, id: string) => `${config.cdnUrl}/live/${id}/master.m3u8`;
/** SPEC §22: WHIP ingest on the CDN host, the stream key as the Bearer token (api/cdn/realtime.ts). */
export const whipUrl = (config: Config) => `${config.cdnUrl}/live/whip`;
export const webrtcUrl = (config: Config, id: string) => `${config.cdnUrl}/live/${id}/whep`;

/** The stored measure as the read shape has it; null while no broadcast is active. */
export function storedHealth(row: LiveStreamRow): StreamHealth | null {
  const h = row.health;
  if (row.status !== 'active' || !h?.protocol) return null;
  return { protocol: h.protocol, video: h.video ?? null, audio: h.audio ?? null, bitrate_kbps: h.bitrate_kbps ?? null, keyframe_interval_s: h.keyframe_interval_s ?? null, warnings: h.warnings ?? [] };
}

/** The live edge's own measure of an SRT or WHIP publisher, in the same shape and with the same warnings. */
export function edgeHealth(e: EdgeStreamStats, protocol: 'srt' | 'whip'): StreamHealth {
  const measured = { bitrate_kbps: e.bitrate_kbps ?? null, keyframe_interval_s: e.keyframe_interval_s ?? null };
  return {
    protocol,
    video: e.video ? { codec: e.video.codec, width: e.video.width, height: e.video.height, fps: e.video.fps ?? null } : null,
    audio: e.audio ? { codec: e.audio.codec } : null,
    ...measured,
    warnings: healthWarnings(measured),
  };
}

/**
 * The read shape of SPEC §17. The stream key is never stored, so only create and reset pass it;
 * otherwise `srt_url` carries a `{stream_key}` placeholder where the key goes.
 */
export function serializeLiveStream(config: Config, row: LiveStreamRow, recent: string[], streamKey?: string) {
  return {
    id: row.id,
    title: row.title,
    visibility: row.visibility,
    status: row.status,
    disabled: row.disabled,
    latency_mode: row.latency_mode,
    reconnect_window: row.reconnect_window,
    record: row.record,
    new_video_settings: row.new_video_settings ?? {},
    // Target stream keys are credentials of another service: accepted, never shown again.
    simulcast_targets: (row.simulcast_targets ?? []).map((t, i) => ({
      url: t.url,
      has_stream_key: Boolean(t.stream_key),
      status: (row.simulcast_status?.[i]?.status ?? 'idle') as 'idle' | 'connecting' | 'live' | 'errored',
      error: row.simulcast_status?.[i]?.error ?? null,
    })),
    passthrough: row.passthrough,
    playback_restriction_id: row.playback_restriction_id ?? null,
    encryption: row.encryption ?? 'none',
    watermark_id: row.watermark_id ?? null,
    ...(streamKey ? { stream_key: streamKey } : {}),
    ingest: { rtmp_url: rtmpUrl(config), srt_url: srtUrl(config, streamKey ?? '{stream_key}'), whip_url: whipUrl(config) },
    hls_url: liveHlsUrl(config, row.id),
    webrtc_url: webrtcUrl(config, row.id),
    health: storedHealth(row),
    embed_url: `${config.playerUrl}/embed/${row.id}`,
    active_video_id: row.active_video_id ? videoPublicId(row.active_video_id) : null,
    recent_video_ids: recent,
    last_disconnect_reason: row.last_disconnect_reason,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}
