import type { PlaybackVideo } from '../playback/access';
import type { PlaybackGrant } from '../playback/tokens';
import { encryptSegment, rungShortSide, segmentIv } from './hls';
import { ipMatches } from './ip';
import { viewerAllowed } from './restriction';

/**
 * SPEC §20 checks made on every viewer request, after the (cached) access decision: the cached
 * decision carries the restriction and the token's claims, never the answer for one Referer, so
 * no request is let through by another's decision. Each returns null when allowed, else the
 * message of a 403 `playback_restricted`.
 */
export interface ViewerRequest {
  referer?: string;
  origin?: string;
  /** The client address (Koa's ctx.ip). */
  ip?: string;
}

/** `video` is anything naming a restriction in force: a video's playback decision or a live stream's (api/cdn/live.ts). */
export function viewerRefusal(video: Pick<PlaybackVideo, 'restriction'>, grant: PlaybackGrant | null, req: ViewerRequest, selfOrigins: ReadonlySet<string>): string | null {
  if (video.restriction && !viewerAllowed(video.restriction, req, selfOrigins)) return 'This video may not be played on this site (playback restriction)';
  if (grant?.ip && !ipMatches(grant.ip, req.ip)) return 'This playback token is for another network address';
  return null;
}

/**
 * A rendition above the token's `max_resolution` (its playlist and segments). `short_side`: the
 * source's, for a `source` rung. Audio renditions (the AUDIO group's `audio/<track>`, an audio-only
 * ladder's `audio-64k`) have no picture: a cap never refuses them (it refused a group's audio
 * whenever the source was taller than the cap, so a capped token played no video with sound).
 */
export function rungRefusal(video: Pick<PlaybackVideo, 'short_side'>, grant: PlaybackGrant | null, rung: string): string | null {
  if (grant?.maxResolution === undefined || /^audio[/-]/.test(rung)) return null;
  const side = rungShortSide(rung) ?? video.short_side ?? Number.POSITIVE_INFINITY;
  return side > grant.maxResolution ? `This playback token allows renditions up to ${grant.maxResolution}p` : null;
}

/** Restricted or encrypted: downloads (MP4/M4A) then need a token with `download: true`. */
export const isProtected = (video: PlaybackVideo) => video.restriction !== null || video.encryption === 'aes-128';

export function downloadRefusal(video: PlaybackVideo, grant: PlaybackGrant | null): string | null {
  return isProtected(video) && !grant?.download ? 'Downloads of this video need a playback token minted with download=true' : null;
}

/** Restricted videos' answers must not be kept by a shared cache that would hand them to any site. */
export function restrictedCacheControl(video: Pick<PlaybackVideo, 'restriction'>, value: string): string {
  return video.restriction ? value.replace(/^public\b/, 'private') : value;
}

const encrypted = new WeakMap<Buffer, Buffer>();

/**
 * The encrypted form of a segment. For bodies held by the file cache the ciphertext is kept beside
 * the clear bytes (weakly: it goes when the cache drops them), so a hot encrypted segment costs a
 * lookup, not a cipher pass, per request.
 */
export function encryptedSegment(key: Buffer, rung: string, name: string, plain: Buffer, keep: boolean): Buffer {
  const hit = keep ? encrypted.get(plain) : undefined;
  if (hit) return hit;
  const out = encryptSegment(key, segmentIv(key, rung, name), plain);
  if (keep) encrypted.set(plain, out);
  return out;
}
