import { z } from 'zod';
import { mp4Support, passthrough } from '../../lib/outputs/options';
import { isoDate, publicVideoId } from '../openapi/common';
import { tagNames, visibility } from '../upload/schema';
import { watermarkIdField } from '../watermarks/schema';

const target = z
  .object({
    url: z.string().trim().max(2048).regex(/^rtmps?:\/\//i, 'must be an rtmp:// or rtmps:// URL'),
    stream_key: z.string().min(1).max(512).regex(/^[^\s/?#]+$/, 'no spaces, slashes, ? or #').optional(),
  })
  .strict();

export const newVideoSettings = z
  .object({
    visibility: visibility.optional(),
    folder_id: z.string().max(100).nullable().optional(),
    tags: tagNames.optional(),
    mp4_support: mp4Support.optional(),
    passthrough: passthrough.optional(),
  })
  .strict();

const fields = {
  title: z.string().trim().max(200),
  visibility,
  latency_mode: z.enum(['standard', 'low']),
  reconnect_window: z.number().int().min(0).max(1800),
  record: z.boolean(),
  new_video_settings: newVideoSettings,
  simulcast_targets: z.array(target).max(5).meta({ description: "Where each broadcast is also pushed (RTMP/RTMPS). Setting or changing them is an owner's (a member's session: 403 `owner_required`; a member may create a stream with none)" }),
  passthrough,
  playback_restriction_id: z.string().max(100).nullable(),
  encryption: z.enum(['none', 'aes-128']),
};

export const createLiveBody = z
  .object({
    title: fields.title.optional(),
    visibility: fields.visibility.optional(),
    latency_mode: fields.latency_mode.default('standard'),
    reconnect_window: fields.reconnect_window.default(60),
    record: fields.record.default(true),
    new_video_settings: fields.new_video_settings.optional(),
    simulcast_targets: fields.simulcast_targets.optional(),
    passthrough: fields.passthrough.optional(),
    playback_restriction_id: fields.playback_restriction_id.optional(),
    encryption: fields.encryption.optional(),
    watermark_id: watermarkIdField,
  })
  .strict();

export const patchLiveBody = z.object(fields).partial().strict();

export const listLiveQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().max(200).optional(),
    status: z.enum(['idle', 'active', 'disconnected']).optional(),
  })
  .strict();

export const liveStream = z
  .object({
    id: z.string().meta({ example: 'ls_…' }),
    title: z.string(),
    visibility: visibility,
    status: z.enum(['idle', 'active', 'disconnected']),
    disabled: z.boolean(),
    latency_mode: z.enum(['standard', 'low']),
    reconnect_window: z.number().int(),
    record: z.boolean(),
    new_video_settings: newVideoSettings,
    simulcast_targets: z.array(
      z.object({
        url: z.string(),
        has_stream_key: z.boolean(),
        status: z.enum(['idle', 'connecting', 'live', 'errored']).meta({ description: 'The push to this target during the broadcast; a failing target never stops the broadcast' }),
        error: z.string().nullable(),
      }),
    ),
    passthrough: z.string().nullable(),
    playback_restriction_id: z.string().nullable().meta({
      description: "The stream's own playback restriction (`pr_…`), enforced on its live playlists, segments and embed page and copied to each recording; null: the workspace's default applies",
    }),
    encryption: z.enum(['none', 'aes-128']).meta({
      description: "`aes-128`: the live segments are encrypted by the CDN with the recording's key, which only a playback token gets (the embed page mints one); applies from the next broadcast. Default: the workspace's default_encryption",
    }),
    watermark_id: z.string().nullable().meta({ description: 'SPEC §24: the watermark profile (`wm_…`) burnt into every rendition, LL-HLS, WHEP and the recording; fixed at creation; null: none' }),
    stream_key: z.string().optional().meta({ description: 'Only on create and reset-stream-key; store it, it is not shown again' }),
    ingest: z.object({
      rtmp_url: z.string().meta({ description: 'RTMP server; the stream key is the stream name', example: 'rtmp://live.example.com:1935/live' }),
      srt_url: z.string().meta({ description: 'SRT URL with the key as `streamid` (`{stream_key}` placeholder outside create/reset)' }),
      whip_url: z.string().meta({
        description: 'WHIP (RFC 9725) endpoint: POST an SDP offer (H.264 + Opus) with `Authorization: Bearer <stream_key>` (no API key) → 201 answer + `Location` (DELETE it, with the same header, to end)',
        example: 'https://cdn.example.com/live/whip',
      }),
    }),
    hls_url: z.string().meta({ description: '`{cdn_url}/live/<ls_id>/master.m3u8`: the live playlist while a broadcast is on (LL-HLS media playlists for `latency_mode: low`)' }),
    webrtc_url: z.string().meta({
      description: '`{cdn_url}/live/<ls_id>/whep`: WHEP playback (POST a recvonly SDP offer → 201 answer + `Location`) for a broadcast that arrived by WHIP; visibility, tokens (`<token>` in place of the id) and restrictions apply as for `hls_url`',
    }),
    embed_url: z.string(),
    health: z
      .object({
        protocol: z.enum(['rtmp', 'srt', 'whip']),
        video: z.object({ codec: z.string(), width: z.number().int(), height: z.number().int(), fps: z.number().nullable() }).nullable(),
        audio: z.object({ codec: z.string() }).nullable(),
        bitrate_kbps: z.number().nullable().meta({ description: 'Measured ingest bitrate over the last 5 s' }),
        keyframe_interval_s: z.number().nullable(),
        warnings: z.array(z.object({ code: z.enum(['keyframe_interval_high', 'bitrate_over_plan']), message: z.string() })).meta({
          description: '`keyframe_interval_high`: keyframes over 4 s apart; `bitrate_over_plan`: over the 20 Mb/s ingest bound. Each is also sent once per connection as a `live_stream.warning` event',
        }),
      })
      .nullable()
      .meta({ description: 'SPEC §22 stream health while the stream is `active` (null otherwise): measured on the feed (RTMP) or by the live edge (SRT, WHIP)' }),
    active_video_id: publicVideoId.nullable().meta({ description: 'The recording of the broadcast going on' }),
    recent_video_ids: z.array(publicVideoId),
    last_disconnect_reason: z.string().nullable(),
    created_at: isoDate,
    updated_at: isoDate,
  })
  .meta({ id: 'LiveStream' });

export const liveStreamList = z
  .object({ data: z.array(liveStream), has_more: z.boolean(), next_cursor: z.string().nullable() })
  .meta({ id: 'LiveStreamList' });
