import { z } from 'zod';

export const playbackQuery = z.object({
  ttl: z.coerce.number().int().min(60).max(86_400).default(3600),
});

export const playback = z
  .object({
    video_id: z.string(),
    hls_url: z.string(),
    thumbnail_url: z.string(),
    embed_url: z.string(),
    token: z.string().meta({ description: 'A JWT; also the path segment of the CDN URLs' }),
    expires_at: z.iso.datetime(),
  })
  .meta({ id: 'Playback' });
