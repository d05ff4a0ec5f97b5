import { z } from 'zod';
import { maxResolution, mp4Support } from '../../lib/outputs/options';
import { isoDate, publicVideoId } from '../openapi/common';

const status = z.enum(['pending_upload', 'processing', 'ready', 'failed']);
const nullableUrl = z.string().nullable().meta({ description: 'null until the video is ready' });

export const rendition = z
  .object({
    name: z.string().meta({ example: '720p' }),
    width: z.number().int(),
    height: z.number().int(),
    bitrate: z.number().int(),
    status: z.enum(['queued', 'processing', 'ready', 'failed']),
    progress: z.number().min(0).max(100),
    quality: z
      .object({
        ssim_db: z.number().meta({ description: 'Mean SSIM as dB, −10·log10(1 − SSIM): 20 dB is SSIM 0.99' }),
        psnr_db: z.number(),
      })
      .nullable()
      .meta({ description: 'Measured against the source scaled to the rung, on sampled frames (SPEC §21); null until measured, and for a rung that is the source itself' }),
  })
  .meta({ id: 'Rendition' });

export const staticRendition = z
  .object({
    name: z.enum(['capped_1080p.mp4', 'audio.m4a']),
    status: z.enum(['preparing', 'processing', 'ready', 'failed']).meta({ description: '`preparing`: asked for by `mp4_support`, made once the ladder is done' }),
    size_bytes: z.number().int().nullable(),
    url: z.string().nullable().meta({ description: '`{cdn_url}/v/<id>/download/<name>`; null until ready' }),
  })
  .meta({ id: 'StaticRendition' });

export const captionTrack = z
  .object({
    language: z.string().meta({ description: 'BCP-47 tag', example: 'en' }),
    label: z.string(),
    default: z.boolean(),
    status: z.enum(['aligning', 'ready', 'failed']).meta({ description: '`aligning` while a transcript is being timed (POST …/align), then `ready` or `failed`; uploaded files are `ready`' }),
    url: z.string().meta({ description: '`{cdn_url}/v/<id>/captions/<language>.vtt` (serves the file once ready)' }),
    error: z.object({ code: z.string(), message: z.string() }).nullable().meta({ description: 'Why the alignment failed; null unless failed' }),
  })
  .meta({ id: 'CaptionTrack' });

export const audioTrack = z
  .object({
    language: z.string().meta({ description: 'BCP-47 tag from the stream\'s metadata; `und` when it has none', example: 'en' }),
    name: z.string(),
    default: z.boolean(),
    channels: z.number().int().meta({ description: '2 (stereo, the downmix of a surround stream) or 6 (5.1)' }),
    status: z.enum(['pending_upload', 'processing', 'ready', 'failed']),
  })
  .meta({ id: 'AudioTrack' });

/** The read shape of SPEC §3, as `serializeVideo` (lib/videos/read.ts) writes it. */
export const videoRead = z
  .object({
    id: publicVideoId,
    video_id: publicVideoId,
    uuid: z.uuid(),
    workspace_id: z.string(),
    title: z.string(),
    description: z.string().nullable(),
    visibility: z.enum(['public', 'unlisted', 'private']),
    status,
    progress: z.number().min(0).max(100),
    duration_seconds: z.number().nullable(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    size_bytes: z.number().int().nullable(),
    filename: z.string(),
    content_type: z.string().nullable(),
    storage_key: z.string(),
    hls_url: nullableUrl,
    thumbnail_url: nullableUrl,
    embed_url: nullableUrl,
    renditions: z.array(rendition),
    codecs: z.array(z.enum(['h264', 'hevc', 'av1'])).meta({ description: 'SPEC §21: H.264 always; HEVC/AV1 add CMAF renditions to the master playlist and a DASH manifest' }),
    dash_url: z.string().nullable().meta({ description: '`{cdn_url}/v/<id>/manifest.mpd` once the DASH manifest of its HEVC or AV1 renditions is published (not encrypted); null before and otherwise' }),
    error_message: z.string().nullable().optional().meta({ description: 'Only when failed' }),
    error_code: z.string().nullable().optional().meta({ description: 'Only when failed: `invalid_media`, `no_video_stream`, `upload_expired`, …' }),
    folder_id: z.string().nullable(),
    tags: z.array(z.string()),
    created_at: isoDate,
    updated_at: isoDate,
    ready_at: isoDate.nullable(),
    // outputs (SPEC §14)
    passthrough: z.string().nullable(),
    max_resolution: maxResolution.nullable(),
    mp4_support: mp4Support,
    source_video_id: publicVideoId.nullable().meta({ description: 'The video a clip was cut from' }),
    static_renditions: z.array(staticRendition),
    storyboard_url: z.string().nullable().meta({ description: '`{cdn_url}/v/<id>/storyboard.vtt`; null until ready' }),
    captions: z.array(captionTrack),
    // audio (SPEC §19)
    audio_tracks: z.array(audioTrack),
    loudness_lufs: z.number().nullable().meta({ description: 'Integrated loudness of the source\'s first audio track (EBU R128), LUFS; null without audio or until measured' }),
    normalize_audio: z.boolean().meta({ description: 'Renditions normalised to −16 LUFS (set on creation)' }),
    // protection (SPEC §20)
    playback_restriction_id: z.string().nullable().meta({ description: "The video's own restriction (`pr_…`); null: the workspace's default applies" }),
    encryption: z.enum(['none', 'aes-128']),
    // live (SPEC §17)
    live_stream_id: z.string().nullable().meta({ description: 'The live stream this video is the recording of (`ls_…`)' }),
    is_live: z.boolean().meta({ description: 'true while the broadcast it records is still going on' }),
    // watermarks (SPEC §24)
    watermark_id: z.string().nullable().meta({ description: 'The watermark profile burnt into every output (`wm_…`), fixed at creation; null: none' }),
  })
  .meta({ id: 'Video' });

export const videoList = z
  .object({ data: z.array(videoRead), has_more: z.boolean(), next_cursor: z.string().nullable() })
  .meta({ id: 'VideoList' });
