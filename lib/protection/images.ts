import type { ImageRequest } from '../outputs/images';
import { STATIC_NAMES, staticSourceRung } from '../outputs/options';
import type { PlaybackGrant } from '../playback/tokens';

// SPEC §20 on the files that are not HLS (docs/protection.md, "Downloads and images"): a token's
// `max_resolution` caps every picture it gets, and an encrypted video's frames need a token.

interface Rung {
  name: string;
  width: number;
  height: number;
  status: string;
}

const shortSide = (w: number, h: number) => Math.min(w, h);

/** The renditions a capped token's images may be rendered from: short side within the cap. */
export function rungsWithinCap<R extends Rung>(renditions: R[], cap: number | undefined): R[] {
  return cap === undefined ? renditions : renditions.filter((r) => shortSide(r.width, r.height) <= cap);
}

/** The size an image comes out at (lib/media/outputs.ts fitFilter, animatedArgs), for a picture of aspect `w / h`; undefined: the rung's own. */
function outputSize(req: ImageRequest, aspect: number): { w: number; h: number } | undefined {
  if (req.kind === 'animated') return { w: req.width, h: req.width / aspect };
  const { width, height, fit } = req;
  if (width && height) {
    if (fit !== 'preserve') return { w: width, h: height };
    return width / height > aspect ? { w: height * aspect, h: height } : { w: width, h: width / aspect };
  }
  if (width) return { w: width, h: width / aspect };
  if (height) return { w: height * aspect, h: height };
  return undefined;
}

/**
 * The request scaled down, box and all, so that the image's short side is at most `cap` (a token's
 * `max_resolution`). Widths and heights are floored, so rounding never takes it past the cap; an
 * animation's width stays a multiple of 8 (canonicalImage). Unchanged when it already fits.
 */
export function cappedImage(req: ImageRequest, aspect: number, cap: number): ImageRequest {
  const size = outputSize(req, aspect);
  const side = size ? shortSide(size.w, size.h) : 0;
  if (side <= cap) return req;
  const f = cap / side;
  if (req.kind === 'animated') return { ...req, width: Math.max(8, Math.floor((req.width * f) / 8) * 8) };
  const scale = (x: number | undefined) => (x === undefined ? undefined : Math.max(1, Math.floor(x * f)));
  return { ...req, width: scale(req.width), height: scale(req.height) };
}

/**
 * A download whose picture is above the token's `max_resolution`: the MP4 is one file, cut from
 * the best rung ≤ 1080p (lib/outputs/options.ts), so it is refused rather than served smaller
 * (there is no smaller MP4 to serve; the token's HLS plays within its cap). The M4A has no picture.
 */
export function downloadCapRefusal(renditions: Rung[], name: string, grant: PlaybackGrant | null): string | null {
  const cap = grant?.maxResolution;
  if (cap === undefined || name === STATIC_NAMES.audio_only) return null;
  const rung = staticSourceRung(renditions, name);
  const side = rung ? shortSide(rung.width, rung.height) : Number.POSITIVE_INFINITY;
  return side > cap ? `This playback token allows pictures up to ${cap}p; ${name} is ${side}p` : null;
}

/** Thumbnails, animations and the storyboard sprite of an encrypted video: clear frames, so a token is needed (as for its key). */
export function encryptedFramesRefusal(video: { encryption: 'none' | 'aes-128' }, grant: PlaybackGrant | null): string | null {
  return video.encryption === 'aes-128' && !grant ? 'The images of an encrypted video need a valid playback token (GET /playback/{id})' : null;
}
