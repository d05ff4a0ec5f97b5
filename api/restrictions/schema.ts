import { z } from 'zod';
import { parseDomain } from '../../lib/protection/domains';
import { isoDate } from '../openapi/common';

/** An allow-list entry, stored in canonical form (lower case, IDNs in punycode). */
const domain = z
  .string()
  .max(262)
  .meta({ description: '`example.com`, `*.example.com` (subdomains), `example.com:8443`, an IDN, or `*` (any site)', example: '*.example.com' })
  .transform((s, ctx) => {
    const p = parseDomain(s);
    if (!p.ok) {
      ctx.addIssue({ code: 'custom', message: p.message });
      return z.NEVER;
    }
    return p.text;
  });

const allowedDomains = z.array(domain).max(100).transform((list) => [...new Set(list)]);

export const createRestrictionBody = z
  .object({
    referrer: z
      .object({
        allowed_domains: allowedDomains,
        allow_no_referrer: z.boolean().default(true).meta({ description: 'Requests without Referer or Origin (apps, `no-referrer` pages) may play' }),
      })
      .strict(),
  })
  .strict();

export const patchRestrictionBody = z
  .object({
    referrer: z.object({ allowed_domains: allowedDomains, allow_no_referrer: z.boolean() }).partial().strict(),
  })
  .strict();

export const listRestrictionsQuery = z
  .object({ limit: z.coerce.number().int().min(1).max(100).default(100), cursor: z.string().max(200).optional() })
  .strict();

export const restriction = z
  .object({
    id: z.string().meta({ example: 'pr_0193a1b2c3d4e5f60718293a4b5c6d7e' }),
    referrer: z.object({ allowed_domains: z.array(z.string()), allow_no_referrer: z.boolean() }),
    created_at: isoDate,
    updated_at: isoDate,
  })
  .meta({ id: 'PlaybackRestriction' });

export const restrictionList = z
  .object({ data: z.array(restriction), has_more: z.boolean(), next_cursor: z.string().nullable() })
  .meta({ id: 'PlaybackRestrictionList' });

export const encryption = z.enum(['none', 'aes-128']);

/** The workspace's defaults (SPEC §20): a restriction for videos that name none, encryption for new videos. */
export const playbackDefaults = z
  .object({
    default_playback_restriction_id: z.string().nullable(),
    default_encryption: encryption,
  })
  .meta({ id: 'PlaybackDefaults' });

export const patchPlaybackDefaultsBody = z
  .object({ default_playback_restriction_id: z.string().max(100).nullable(), default_encryption: encryption })
  .partial()
  .strict();
