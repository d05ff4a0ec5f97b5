import { z } from 'zod';
import { parseIpClaim } from '../../lib/protection/ip';

const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const playbackQuery = z.object({
  ttl: z.coerce.number().int().min(60).max(86_400).default(3600),
  // SPEC §20 token claims
  ip: z
    .string()
    .max(64)
    .meta({ description: 'An address or CIDR the viewer must come from (`203.0.113.7`, `10.0.0.0/8`)' })
    .transform((s, ctx) => {
      const ip = parseIpClaim(s);
      if (!ip) {
        ctx.addIssue({ code: 'custom', message: 'must be an IPv4/IPv6 address or CIDR' });
        return z.NEVER;
      }
      return ip;
    })
    .optional(),
  max_resolution: z.enum(['240p', '360p', '480p', '720p', '1080p', '1440p', '2160p']).optional().meta({ description: 'Playlists list only rungs up to this; higher rungs are refused' }),
  download: flag.optional().meta({ description: 'MP4/M4A downloads allowed (needed for a protected video)' }),
  playback_restriction_id: z.string().max(100).optional().meta({ description: "A restriction (`pr_…`) that replaces the video's own for this token" }),
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
