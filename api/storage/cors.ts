import type { ParameterizedContext } from 'koa';

/** tus request and response headers a browser must be allowed to send and read (tus 1.0.0). */
export const TUS_REQUEST_HEADERS = ['Tus-Resumable', 'Upload-Length', 'Upload-Offset', 'Upload-Metadata', 'Upload-Defer-Length', 'Upload-Concat', 'X-HTTP-Method-Override', 'X-Requested-With'];
export const TUS_RESPONSE_HEADERS = ['Location', 'Tus-Resumable', 'Tus-Version', 'Tus-Extension', 'Tus-Max-Size', 'Upload-Offset', 'Upload-Length', 'Upload-Metadata', 'Upload-Expires', 'Video-Id'];

/**
 * CORS for upload URLs (SPEC §13): the URL is the credential, so any origin may use it unless the
 * video was created with a `cors_origin`; no cookies are involved (no Allow-Credentials).
 */
export function setUploadCors(ctx: ParameterizedContext, origin: string | null | undefined, opts: { preflight: boolean; tus?: boolean }): void {
  ctx.set('Access-Control-Allow-Origin', origin || '*');
  if (origin && origin !== '*') ctx.vary('Origin');
  const exposed = ['ETag', 'X-Request-Id', ...(opts.tus ? TUS_RESPONSE_HEADERS : [])];
  ctx.set('Access-Control-Expose-Headers', exposed.join(', '));
  if (!opts.preflight) return;
  ctx.set('Access-Control-Allow-Methods', opts.tus ? 'POST, HEAD, PATCH, DELETE, OPTIONS' : 'PUT, OPTIONS');
  ctx.set('Access-Control-Allow-Headers', ['Content-Type', 'Content-Length', ...(opts.tus ? TUS_REQUEST_HEADERS : [])].join(', '));
  ctx.set('Access-Control-Max-Age', '600');
}
