import type { ParsedUrlQuery } from 'node:querystring';
import { z } from 'zod';
import { thumbnailTime } from '../../../lib/media/args';
import { animationFrames, canonicalImage, type ImageRenderer, type ImageRequest, type Requester } from '../../../lib/outputs/images';
import { passthroughView, withOnRequest } from '../../../lib/outputs/passthrough';
import { RenderRefused } from '../../../lib/outputs/renderQueue';
import type { VideoRow } from '../../../lib/videos/read';
import type { Deps } from '../../deps';
import { ApiError, badRequest, forbidden } from '../../errors';
import { cappedImage, rungsWithinCap } from '../../../lib/protection/images';

export const IMAGE_LIMITS = { maxSide: 1920, maxAnimatedWidth: 640, maxFps: 30, maxSpan: 10 } as const;

const seconds = z.coerce.number().finite().min(0);
const side = (max: number) => z.coerce.number().int().min(1).max(max);

export const thumbnailQuery = z
  .object({
    time: seconds.optional(),
    width: side(IMAGE_LIMITS.maxSide).optional(),
    height: side(IMAGE_LIMITS.maxSide).optional(),
    fit_mode: z.enum(['preserve', 'crop', 'pad']).default('preserve'),
  })
  .strict();

export const animatedQuery = z
  .object({
    start: seconds.default(0),
    end: seconds.optional(),
    width: side(IMAGE_LIMITS.maxAnimatedWidth).default(320),
    fps: z.coerce.number().int().min(1).max(IMAGE_LIMITS.maxFps).default(10),
  })
  .strict();

// Numbers are plain decimals: z.coerce.number() alone took `width=0x10` for 16 and `time=` for 0.
const NUMERIC = new Set(['time', 'width', 'height', 'start', 'end', 'fps']);
const DECIMAL = /^\d{1,9}(\.\d{1,6})?$/;

function parse<T extends z.ZodType>(schema: T, query: ParsedUrlQuery): z.infer<T> {
  const single = Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v]));
  const notDecimal = Object.entries(single).filter(([k, v]) => NUMERIC.has(k) && !DECIMAL.test(v ?? ''));
  if (notDecimal.length) {
    throw badRequest('invalid_parameters', 'The query string has invalid parameters', notDecimal.map(([k]) => ({ field: k, message: 'must be a decimal number, like 12 or 2.5' })));
  }
  const r = schema.safeParse(single);
  if (!r.success) {
    throw badRequest('invalid_parameters', 'The query string has invalid parameters', r.error.issues.map((i) => ({ field: i.path.join('.') || '(query)', message: i.message })));
  }
  return r.data;
}

/** Validates the query against the video (SPEC §14 bounds) into a render request. */
export function imageRequest(p: { kind: 'thumbnail' | 'animated'; ext: string }, query: ParsedUrlQuery, duration: number): ImageRequest {
  if (p.kind === 'thumbnail') {
    const q = parse(thumbnailQuery, query);
    const time = q.time ?? thumbnailTime(duration);
    if (time > duration) throw badRequest('time_out_of_range', `time must be within the video's ${duration} seconds`, { field: 'time' });
    return canonicalImage({ kind: 'thumbnail', ext: p.ext as 'jpg' | 'png' | 'webp', time: Math.min(time, Math.max(0, duration - 0.05)), width: q.width, height: q.height, fit: q.fit_mode }, duration);
  }
  const q = parse(animatedQuery, query);
  const end = q.end ?? Math.min(q.start + 5, duration);
  if (q.start >= duration) throw badRequest('time_out_of_range', `start must be before the video's end (${duration} s)`, { field: 'start' });
  if (end > duration) throw badRequest('time_out_of_range', `end must be within the video's ${duration} seconds`, { field: 'end' });
  if (end <= q.start) throw badRequest('invalid_parameters', 'end must be after start', [{ field: 'end', message: 'must be greater than start' }]);
  if (end - q.start > IMAGE_LIMITS.maxSpan) {
    throw badRequest('invalid_parameters', `start and end may be at most ${IMAGE_LIMITS.maxSpan} seconds apart`, [{ field: 'end', message: `at most start + ${IMAGE_LIMITS.maxSpan}` }]);
  }
  const req = canonicalImage({ kind: 'animated', ext: p.ext as 'gif' | 'webp', start: q.start, end, width: q.width, fps: q.fps }, duration);
  if (req.kind === 'animated' && animationFrames(req) < 1) {
    throw badRequest('invalid_parameters', 'The animation would have no frame: (end - start) × fps must be at least 1 (times are rounded to 0.1 s)', [
      { field: 'end', message: 'too close to start for this fps' },
    ]);
  }
  return req;
}

const REFUSALS: Record<RenderRefused['reason'], [number, string]> = {
  over_budget: [429, 'render_rate_limited'],
  queue_full: [503, 'render_queue_full'],
  timeout: [503, 'render_timeout'],
  failed: [503, 'render_failed'],
  unavailable: [503, 'render_unavailable'],
};

/** A refused or failed render as a JSON error with Retry-After (never a 500). */
export function refusalError(err: RenderRefused): ApiError {
  const [status, code] = REFUSALS[err.reason];
  return new ApiError(status, code, err.message, undefined, { 'Retry-After': String(err.retryAfterSeconds) });
}

/**
 * Renders (or finds) the image. `cap`: a token's `max_resolution` (SPEC §20): the image is made
 * from rungs within it and scaled so that its short side stays within it; no rung within it → 403.
 */
export async function renderImage(deps: Deps, renderer: ImageRenderer, row: VideoRow, p: { kind: 'thumbnail' | 'animated'; ext: string }, query: ParsedUrlQuery, who: Requester, cap?: number) {
  let req = imageRequest(p, query, row.duration_seconds ?? 0);
  const all = withOnRequest(await deps.db('renditions').where({ video_id: row.id }).select('name', 'width', 'height', 'status'), row.on_request_renditions);
  // Until the ladder lands, the passthrough is what the video plays from: render from it too.
  const source = passthroughView(row.passthrough_rendition);
  if (source) all.push(source);
  const renditions = rungsWithinCap(all, cap);
  if (cap !== undefined) {
    const pictures = renditions.filter((r) => r.status === 'ready' && r.width > 0 && r.height > 0);
    if (pictures.length === 0 && all.some((r) => r.width > 0)) throw forbidden('playback_restricted', `This playback token allows pictures up to ${cap}p, and the video has none that small`);
    const largest = pictures.sort((a, b) => b.width * b.height - a.width * a.height)[0];
    if (largest) req = cappedImage(req, largest.width / largest.height, cap);
  }
  try {
    return await renderer.ensureImage({ workspaceId: row.workspace_id, id: row.id, renditions }, req, who);
  } catch (err) {
    if (err instanceof RenderRefused) throw refusalError(err);
    throw err;
  }
}
