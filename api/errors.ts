/** The few ways a request fails. Handlers throw these; `middleware/errors.ts` renders them. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (code: string, message: string, details?: unknown) => new ApiError(400, code, message, details);
export const unauthorized = (message = 'A valid API key is required (Authorization: Bearer <key> or X-API-Key)') =>
  new ApiError(401, 'unauthorized', message);
export const forbidden = (code: string, message: string) => new ApiError(403, code, message);
export const notFound = (what = 'Resource') => new ApiError(404, 'not_found', `${what} not found`);
export const conflict = (code: string, message: string, details?: unknown) => new ApiError(409, code, message, details);
export const tooLarge = (message: string) => new ApiError(413, 'payload_too_large', message);
/**
 * SPEC §25: on-request jobs (alignments, added audio tracks, clips) in flight are bounded per
 * video and per workspace; past either, 429 `too_many_jobs` with Retry-After.
 */
export const tooManyJobs = (scope: 'video' | 'workspace', bounds: { perVideo: number; perWorkspace: number; retryAfterSeconds: number }) => {
  const limit = scope === 'video' ? bounds.perVideo : bounds.perWorkspace;
  const what = scope === 'video' ? 'This video has' : 'This workspace has';
  return new ApiError(429, 'too_many_jobs', `${what} ${limit} jobs in flight (alignments, added audio tracks, clips); retry when one has finished`, { scope, limit }, { 'Retry-After': String(bounds.retryAfterSeconds) });
};
/** Seconds a client should wait before retrying a request refused because a dependency is down. */
export const RETRY_AFTER_SECONDS = 5;
export const unavailable = (message = 'The processing service is unavailable; try again shortly') =>
  new ApiError(503, 'temporarily_unavailable', message, undefined, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
export const rateLimited = (retryAfter: number) =>
  new ApiError(429, 'rate_limited', 'Too many requests; retry later', undefined, { 'Retry-After': String(retryAfter) });
export const tooManyBadKeys = (retryAfter: number) =>
  new ApiError(429, 'too_many_invalid_keys', 'Too many requests with invalid API keys from this address; retry later', undefined, {
    'Retry-After': String(retryAfter),
  });
