import type { ParsedUrlQuery } from 'node:querystring';
import { z } from 'zod';
import { thumbnailTime } from '../../../lib/media/args';
import { ensureImage, type ImageRequest } from '../../../lib/outputs/images';
import type { MediaTools } from '../../../lib/media/tools';
import type { VideoRow } from '../../../lib/videos/read';
import type { Deps } from '../../deps';
import { badRequest } from '../../errors';

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
    return { kind: 'thumbnail', ext: p.ext as 'jpg' | 'png' | 'webp', time: Math.min(time, Math.max(0, duration - 0.05)), width: q.width, height: q.height, fit: q.fit_mode };
  }
  const q = parse(animatedQuery, query);
  const end = q.end ?? Math.min(q.start + 5, duration);
  if (q.start >= duration) throw badRequest('time_out_of_range', `start must be before the video's end (${duration} s)`, { field: 'start' });
  if (end > duration) throw badRequest('time_out_of_range', `end must be within the video's ${duration} seconds`, { field: 'end' });
  if (end <= q.start) throw badRequest('invalid_parameters', 'end must be after start', [{ field: 'end', message: 'must be greater than start' }]);
  if (end - q.start > IMAGE_LIMITS.maxSpan) {
    throw badRequest('invalid_parameters', `start and end may be at most ${IMAGE_LIMITS.maxSpan} seconds apart`, [{ field: 'end', message: `at most start + ${IMAGE_LIMITS.maxSpan}` }]);
  }
  return { kind: 'animated', ext: p.ext as 'gif' | 'webp', start: q.start, end, width: q.width, fps: q.fps };
}

export async function renderImage(deps: Deps, media: MediaTools, row: VideoRow, p: { kind: 'thumbnail' | 'animated'; ext: string }, query: ParsedUrlQuery) {
  const req = imageRequest(p, query, row.duration_seconds ?? 0);
  const renditions = await deps.db('renditions').where({ video_id: row.id }).select('name', 'width', 'height', 'status');
  return ensureImage({ storage: deps.storage, media }, { workspaceId: row.workspace_id, id: row.id, renditions }, req);
}
