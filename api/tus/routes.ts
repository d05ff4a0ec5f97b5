import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { Readable } from 'node:stream';
import { videoPublicId } from '../../lib/ids';
import type { Deps } from '../deps';
import { ApiError, badRequest, notFound, tooLarge } from '../errors';
import { auth, authenticate, requireFull } from '../middleware/auth';
import { rateLimit } from '../middleware/rateLimit';
import { setUploadCors } from '../storage/cors';
import { uploadClosed } from '../storage/routes';
import { createVideo } from '../upload/create';
import { deleteVideo } from '../videos/delete';
import { idempotency } from '../middleware/idempotency';
import { loadVideoRow } from '../../lib/videos/read';
import { parseTusUrlToken } from './ids';
import { parseTusMetadata } from './metadata';
import { creatingUpload, tusFor } from './server';

const TUS_VERSION = '1.0.0';

/** The stores leave a trailing piece (S3 `<id>.part`); nothing of a given-up upload may stay. */
async function discardUpload(deps: Deps, videoId: string, uploadId: string, ctx: ParameterizedContext): Promise<void> {
  const row = await loadVideoRow(deps.db, videoId);
  if (row && row.status === 'pending_upload') await deleteVideo(deps, row, ctx.state.log);
  await deps.storage.deletePrefix(uploadId);
}

/**
 * Hands the request to the tus server as a web Request (its body streams, never buffered) and
 * answers with its Response, setting this video's CORS origin.
 */
async function forward(ctx: ParameterizedContext, deps: Deps, corsOrigin: string | null, extra: Record<string, string> = {}): Promise<void> {
  const headers = new Headers();
  for (const [k, v] of Object.entries(ctx.req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  const hasBody = ctx.method === 'PATCH' || ctx.method === 'POST';
  const request = new Request(`http://tus.internal${ctx.path}`, {
    method: ctx.method,
    headers,
    body: hasBody ? (Readable.toWeb(ctx.req) as ReadableStream) : undefined,
    // @ts-expect-error Node's fetch needs duplex for a streamed request body; lib.dom lacks it.
    duplex: 'half',
  });
  const res = await tusFor(deps).server.handleWeb(request);
  ctx.status = res.status;
  res.headers.forEach((v, k) => ctx.set(k, v));
  ctx.set('Access-Control-Allow-Origin', corsOrigin || '*');
  for (const [k, v] of Object.entries(extra)) ctx.set(k, v);
  ctx.set('Access-Control-Expose-Headers', `${res.headers.get('Access-Control-Expose-Headers') ?? ''}, Video-Id, X-Request-Id`.replace(/^, /, ''));
  // tus answers carry no body but a short error text; '' keeps Koa from turning a 201 into a 204.
  ctx.body = await res.text();
}

/** tus answers and errors carry Tus-Resumable; browsers need CORS on errors too. */
function tusHeaders(ctx: ParameterizedContext, corsOrigin: string | null, preflight = false): void {
  if (ctx.method !== 'OPTIONS') ctx.set('Tus-Resumable', TUS_VERSION);
  setUploadCors(ctx, corsOrigin, { preflight, tus: true });
}

/**
 * tus 1.0.0 (SPEC §13). `POST /upload/tus` creates a video and its upload (API key); the upload
 * resource `/upload/tus/<token>` is a capability URL like the PUT one: HEAD, PATCH, DELETE without
 * a key, refused once the upload is closed (SPEC §12).
 */
export function tusRoutes(r: Router, deps: Deps): void {
  const { config, db } = deps;

  r.options('/upload/tus', async (ctx) => {
    tusHeaders(ctx, null, true);
    ctx.set('Access-Control-Allow-Headers', `${ctx.response.get('Access-Control-Allow-Headers')}, Authorization, X-API-Key`);
    ctx.set('Tus-Version', TUS_VERSION);
    ctx.set('Tus-Extension', 'creation,creation-with-upload,termination,expiration');
    ctx.set('Tus-Max-Size', String(config.upload.maxResumableBytes));
    ctx.status = 204;
  });

  // Replayed like every other POST (SPEC §16); what identifies the request is its headers.
  const replayable = idempotency(db, { requestOf: (ctx) => ({ length: ctx.get('upload-length'), metadata: ctx.get('upload-metadata') }) });

  r.post('/upload/tus', authenticate(deps.hot), rateLimit(deps.hot.perKey), replayable, async (ctx) => {
    tusHeaders(ctx, null);
    requireFull(ctx);
    const a = auth(ctx);
    if (ctx.get('tus-resumable') !== TUS_VERSION) throw new ApiError(412, 'tus_version', `Tus-Resumable: ${TUS_VERSION} is required`, undefined, { 'Tus-Version': TUS_VERSION });
    if (ctx.get('upload-defer-length')) throw badRequest('invalid_parameters', 'Upload-Defer-Length is not supported: send Upload-Length');
    const length = Number(ctx.get('upload-length'));
    if (!/^\d+$/.test(ctx.get('upload-length')) || length < 1) throw badRequest('invalid_parameters', 'Upload-Length must be a positive integer');
    if (length > config.upload.maxResumableBytes) throw tooLarge(`Upload-Length exceeds the ${config.upload.maxResumableBytes} bytes a resumable upload may have`);
    const meta = parseTusMetadata(ctx.get('upload-metadata') || undefined);
    const v = await createVideo(deps, a, {
      filename: meta.filename,
      contentType: meta.content_type,
      size: length,
      title: meta.title,
      description: meta.description,
      visibility: meta.visibility,
      folderId: meta.folder_id,
      watermarkId: meta.watermark_id,
      source: {
        kind: 'upload',
        declaredSize: length,
        contentType: meta.content_type,
        uploadTimeoutMs: (config.upload.urlTtlSeconds + config.upload.graceSeconds) * 1000,
        uploadUrlExpiresAt: Date.now() + config.upload.urlTtlSeconds * 1000,
      },
      upload: { protocol: 'tus' },
    });
    let created = false;
    try {
      await creatingUpload.run({ uploadId: v.uploadKey! }, () => forward(ctx, deps, null, { 'Video-Id': videoPublicId(v.id) }));
      created = ctx.status === 201;
    } finally {
      // A creation that failed (a creation-with-upload body past Upload-Length, a broken
      // stream) has no upload URL for the client to resume: the video and its reservation go now.
      if (!created) await discardUpload(deps, v.id, v.uploadKey!, ctx);
    }
  });

  // GET would read the upload back; an upload URL only writes.
  r.all('/upload/tus/:token', async (ctx) => {
    const parsed = parseTusUrlToken(ctx.params.token);
    const row = parsed
      ? await db('videos').where({ id: parsed.videoId }).first('status', 'deleted_at', 'upload_key', 'size_bytes', 'cors_origin', 'error_code', 'upload_closed_at')
      : undefined;
    const corsOrigin: string | null = row?.cors_origin ?? null;
    if (ctx.method === 'OPTIONS') {
      tusHeaders(ctx, corsOrigin, true);
      ctx.status = 204;
      return;
    }
    tusHeaders(ctx, corsOrigin);
    if (!['HEAD', 'PATCH', 'DELETE'].includes(ctx.method)) throw new ApiError(405, 'method_not_allowed', 'Upload URLs take HEAD, PATCH and DELETE (tus 1.0.0)');
    if (!parsed || !row || row.upload_key !== parsed.uploadId) throw notFound('Upload');
    if (row.status === 'pending_upload' && !row.deleted_at && !row.upload_closed_at) {
      await forward(ctx, deps, corsOrigin);
      // Termination gives the upload up: the video is deleted (its declared size stops counting
      // against the quota at once, and `video.deleted` follows as for any deletion).
      if (ctx.method === 'DELETE' && ctx.status === 204) await discardUpload(deps, parsed.videoId, parsed.uploadId, ctx);
      return;
    }

    const expired = row.status === 'failed' && row.error_code === 'upload_expired';
    if (expired) throw new ApiError(410, 'upload_expired', 'The upload expired before it was finished');
    if (row.deleted_at) {
      if (ctx.method === 'HEAD') throw notFound('Upload');
      throw uploadClosed();
    }
    // Completed: a resuming client learns that every byte is there; nothing may change it.
    if (ctx.method === 'HEAD') {
      ctx.set('Upload-Offset', String(row.size_bytes));
      ctx.set('Upload-Length', String(row.size_bytes));
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 200;
      ctx.body = '';
      return;
    }
    throw uploadClosed();
  });
}
