import { z } from 'zod';
import { codecList } from '../encoding/schema';
import { maxResolution, mp4Support, passthrough } from '../../lib/outputs/options';
import { watermarkIdField } from '../watermarks/schema';

const MAX_FILENAME = 1024;
export const contentType = z
  .string()
  // Case-insensitive without the i flag, so the OpenAPI pattern (no flags in JSON Schema) matches the same.
  // audio/* too: audio-only media flows like video (SPEC §19).
  .regex(/^([Vv][Ii][Dd][Ee][Oo]|[Aa][Uu][Dd][Ii][Oo])\/[A-Za-z0-9][A-Za-z0-9.+-]*$/, 'must be a video/* or audio/* media type')
  .transform((s) => s.toLowerCase());
export const visibility = z.enum(['public', 'unlisted', 'private']);
export const tagNames = z.array(z.string().trim().min(1).max(64)).max(50);

/** Optional metadata accepted at creation (init, presigned, from-url). */
export const videoMeta = {
  title: z.string().trim().min(1).max(200).optional(),
  description: z.string().max(5000).optional(),
  visibility: visibility.optional(),
  folder_id: z.string().nullable().optional(),
  tags: tagNames.optional(),
  // outputs (SPEC §14)
  passthrough: passthrough.optional(),
  max_resolution: maxResolution.optional(),
  mp4_support: mp4Support.optional(),
  // SPEC §21: extra codecs as CMAF renditions (+ DASH); H.264 is always kept
  codecs: codecList
    .optional()
    .meta({ description: 'Codecs to encode in: H.264 always, plus "hevc" and/or "av1" as CMAF renditions with a DASH manifest; absent: the workspace\'s default (`/v1/encoding-defaults`)', example: ['h264', 'av1'] }),
  // audio (SPEC §19)
  normalize_audio: z.boolean().optional().meta({ description: 'Normalise every audio rendition to −16 LUFS (EBU R128, two-pass loudnorm)' }),
  // protection (SPEC §20)
  playback_restriction_id: z.string().max(100).nullable().optional(),
  encryption: z.enum(['none', 'aes-128']).optional().meta({ description: "`aes-128`: HLS segments encrypted with the video's key; default: the workspace's" }),
  // watermarks (SPEC §24)
  watermark_id: watermarkIdField,
};

/** A browser origin (`https://app.example.com`), normalised; `*` allows any (the URL is the credential). */
export const corsOrigin = z
  .string()
  .max(2048)
  .transform((s, ctx) => {
    if (s === '*') return s;
    let u: URL | undefined;
    try {
      u = new URL(s);
    } catch {
      /* refused below */
    }
    const bare = u && (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password && u.pathname === '/' && !u.search && !u.hash;
    if (!u || !bare || s.replace(/\/$/, '') !== u.origin) {
      ctx.addIssue({ code: 'custom', message: 'must be an origin such as https://app.example.com (scheme, host and port only) or *' });
      return z.NEVER;
    }
    return u.origin;
  });

export const uploadProtocol = z.enum(['put', 'tus']);

/** A single PUT is bounded by the storage's single-request limit; tus may go up to `maxResumable`. */
const uploadSize = (maxBytes: number, maxResumable: number) =>
  z.number().int().min(1).max(Math.max(maxBytes, maxResumable), `must be at most ${Math.max(maxBytes, maxResumable)} bytes`);

const uploadOptions = {
  cors_origin: corsOrigin.optional(),
  upload_protocol: uploadProtocol.optional(),
};

function putLimit<T extends { upload_protocol?: 'put' | 'tus' }>(maxBytes: number, sizeOf: (b: T) => number, field: string) {
  return (b: T, ctx: z.RefinementCtx) => {
    if ((b.upload_protocol ?? 'put') === 'put' && sizeOf(b) > maxBytes) {
      ctx.addIssue({ code: 'custom', path: [field], message: `must be at most ${maxBytes} bytes for a single PUT (use "upload_protocol": "tus" for larger files)` });
    }
  };
}

export const initBody = (maxBytes: number, maxResumable = maxBytes) =>
  z
    .object({
      filename: z.string().min(1).max(MAX_FILENAME),
      size: uploadSize(maxBytes, maxResumable),
      content_type: contentType,
      ...videoMeta,
      ...uploadOptions,
    })
    .superRefine(putLimit(maxBytes, (b) => b.size, 'size'));

export const presignedBody = (maxBytes: number, maxResumable = maxBytes) =>
  z
    .object({
      workspace_id: z.string().min(1),
      filename: z.string().min(1).max(MAX_FILENAME),
      file_size: uploadSize(maxBytes, maxResumable),
      content_type: contentType,
      ...videoMeta,
      ...uploadOptions,
    })
    .superRefine(putLimit(maxBytes, (b) => b.file_size, 'file_size'));

export const completeBody = z.object({ video_id: z.string().min(1) });

// Answers (documented in ./openapi.ts; the suite validates every response against them).
const uploadTarget = {
  upload_url: z.string().meta({ description: 'S3: a presigned PUT. Local storage: `{base_url}/storage/upload/<token>`. tus: `{base_url}/upload/tus/<token>`' }),
  upload_protocol: uploadProtocol.meta({ description: '`put`: one PUT to upload_url; `tus`: tus 1.0.0 PATCHes to upload_url' }),
  upload_method: z.string().meta({ example: 'PUT' }),
  upload_headers: z.record(z.string(), z.string()).meta({ description: 'Headers the PUT must carry (Content-Type)' }),
  expires_in: z.number().int().meta({ example: 3600 }),
  storage_key: z.string(),
};
export const initResponse = z.object({ video_id: z.string(), ...uploadTarget }).meta({ id: 'UploadInit' });
export const completeResponse = z.object({ video_id: z.string(), status: z.string() }).meta({ id: 'UploadComplete' });
export const presignedData = z.object({ video_id: z.uuid(), ...uploadTarget }).meta({ id: 'PresignedUpload' });
export const confirmData = z
  .object({ video_id: z.uuid(), status: z.enum(['uploading', 'processing', 'ready', 'failed']) })
  .meta({ id: 'ConfirmedUpload' });
export const fromUrlData = z
  .object({ video_id: z.uuid(), status: z.literal('processing'), message: z.string() })
  .meta({ id: 'UrlImport' });
