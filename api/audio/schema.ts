import { z } from 'zod';

/** POST /v1/videos/{id}/audio-tracks (SPEC §19). Without `url`, `size` and `content_type` sign the upload URL. */
export const addAudioTrackBody = z
  .object({
    language: z.string().trim().min(2).max(35).meta({ description: 'BCP-47 tag (`en`, `pt-BR`); one added track per language', example: 'es' }),
    name: z.string().trim().min(1).max(100).meta({ example: 'Español' }),
    default: z.boolean().optional().meta({ description: 'Make it the AUDIO group\'s DEFAULT=YES rendition once ready' }),
    url: z.string().trim().min(1).max(2048).optional().meta({ description: 'http(s) URL to fetch the file from (public addresses only)' }),
    size: z.number().int().positive().optional().meta({ description: 'Bytes the upload URL will accept (required without `url`)' }),
    content_type: z
      .string()
      .regex(/^[Aa][Uu][Dd][Ii][Oo]\/[A-Za-z0-9][A-Za-z0-9.+-]*$/, 'must be an audio/* media type')
      .transform((s) => s.toLowerCase())
      .optional()
      .meta({ description: 'The upload\'s Content-Type (required without `url`), e.g. `audio/mpeg`' }),
  })
  .strict();

export const audioTrackRead = z
  .object({
    language: z.string(),
    name: z.string(),
    default: z.boolean(),
    channels: z.number().int(),
    status: z.enum(['pending_upload', 'processing', 'ready', 'failed']),
    error_message: z.string().nullable().optional(),
  })
  .meta({ id: 'AudioTrackDetail' });

export const addedAudioTrack = audioTrackRead
  .extend({
    upload_url: z.string().nullable().meta({ description: 'Single-use PUT URL (no API key), when no `url` was given' }),
    upload_headers: z.record(z.string(), z.string()).nullable(),
    expires_in: z.number().int().nullable(),
  })
  .meta({ id: 'AddedAudioTrack' });
