import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { videoPublicId } from '../../lib/ids';
import { loadVideoRow, type VideoRow } from '../../lib/videos/read';
import { queryVideoState } from '../../lib/videos/workflow';
import type { AuthState, Deps } from '../deps';
import { auth } from '../middleware/auth';
import { parseBody } from '../middleware/validate';
import { ApiError, forbidden } from '../errors';
import { findVideo } from '../videos/find';
import { createTusUpload } from '../tus/server';
import { completeUpload } from './complete';
import { createVideo, type CreatedVideo, metaFields } from './create';
import { completeBody, initBody, presignedBody } from './schema';

/** Form B says `uploading` where Form A says `pending_upload` (SPEC §1). */
export const formBStatus = (s: string) => (s === 'pending_upload' ? 'uploading' : s);

export { updateError } from './complete';

/** The upload URL of a new video: a presigned PUT to its staging key, or its tus resource (SPEC §13). */
async function uploadUrl(deps: Deps, v: CreatedVideo, protocol: 'put' | 'tus', contentType: string, size: number) {
  const expiresIn = deps.config.upload.urlTtlSeconds;
  if (protocol === 'tus') {
    const url = await createTusUpload(deps, v.uploadKey!, size, { filename: v.filename, contentType });
    return { url, method: 'PATCH', headers: {} as Record<string, string>, expiresIn, protocol };
  }
  const up = await deps.storage.presignPut(v.uploadKey!, { contentType, contentLength: size, expiresIn, videoId: v.id });
  return { ...up, protocol };
}

type UploadRequest = Parameters<typeof metaFields>[0] & { filename: string; content_type: string; cors_origin?: string; upload_protocol?: 'put' | 'tus' };

export function uploadRoutes(r: Router, deps: Deps): void {
  const { config } = deps;
  // Built once: a zod schema compiles its parser on first use, which per request cost init ~8 % of its CPU.
  const initSchema = initBody(config.upload.maxBytes, config.upload.maxResumableBytes);
  const presignedSchema = presignedBody(config.upload.maxBytes, config.upload.maxResumableBytes);
  const uploadSource = (size: number, contentType: string) => ({
    kind: 'upload' as const,
    declaredSize: size,
    contentType,
    uploadTimeoutMs: (config.upload.urlTtlSeconds + config.upload.graceSeconds) * 1000,
    uploadUrlExpiresAt: Date.now() + config.upload.urlTtlSeconds * 1000,
  });
  /** A video waiting for its upload, and where to send the bytes (Forms A, B and C). */
  const createUpload = async (a: AuthState, body: UploadRequest, size: number) => {
    const protocol = body.upload_protocol ?? 'put';
    const v = await createVideo(deps, a, {
      filename: body.filename,
      contentType: body.content_type,
      size,
      ...metaFields(body),
      source: uploadSource(size, body.content_type),
      upload: { protocol, corsOrigin: body.cors_origin },
    });
    return { v, up: await uploadUrl(deps, v, protocol, body.content_type, size) };
  };

  // Form A / C
  r.post('/upload/init', async (ctx) => {
    const a = auth(ctx);
    const body = parseBody(ctx, initSchema);
    const { v, up } = await createUpload(a, body, body.size);
    ctx.status = 201;
    ctx.body = {
      video_id: videoPublicId(v.id),
      upload_url: up.url,
      upload_protocol: up.protocol,
      upload_method: up.method,
      upload_headers: up.headers,
      expires_in: up.expiresIn,
      storage_key: v.storageKey,
    };
  });

  r.post('/upload/complete', async (ctx) => {
    const { video_id } = parseBody(ctx, completeBody);
    const row = await findVideo(ctx, deps, video_id);
    const { status, started } = await completeUpload(deps, row);
    ctx.status = started ? 202 : 200;
    ctx.body = { video_id: videoPublicId(row.id), status };
  });

  // Form B (enveloped by the error middleware and `ok` below)
  r.post('/upload/presigned', async (ctx) => {
    const a = auth(ctx);
    const body = parseBody(ctx, presignedSchema);
    if (body.workspace_id !== a.workspaceId) throw forbidden('workspace_mismatch', 'workspace_id is not the workspace of this API key');
    const { v, up } = await createUpload(a, body, body.file_size);
    ok(ctx, 201, {
      video_id: v.id,
      upload_url: up.url,
      upload_protocol: up.protocol,
      upload_method: up.method,
      upload_headers: up.headers,
      storage_key: v.storageKey,
      expires_in: up.expiresIn,
    });
  });

  r.post('/upload/confirm/:video_id', async (ctx) => {
    const row = await findVideo(ctx, deps, ctx.params.video_id);
    let { status } = await completeUpload(deps, row);
    // Form B promises "ready" when it can: wait a bounded time for the first playable rendition.
    const deadline = Date.now() + config.upload.confirmWaitMs;
    while (status === 'processing' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const live = await queryVideoState(deps.temporal, row.id);
      const current = live?.status ?? (await loadVideoRow(deps.db, row.id))?.status;
      if (!current) throw new ApiError(404, 'not_found', 'Video not found');
      status = current;
    }
    ok(ctx, 200, { video_id: row.id, status: formBStatus(status) });
  });
}

export function ok(ctx: ParameterizedContext, status: number, data: unknown): void {
  ctx.status = status;
  ctx.body = { success: true, data };
}
