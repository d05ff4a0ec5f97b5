import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { videoPublicId } from '../../lib/ids';
import { loadVideoRow, type VideoRow } from '../../lib/videos/read';
import { queryVideoState } from '../../lib/videos/workflow';
import { completeUploadUpdate, videoWorkflowId } from '../../workflows/defs';
import type { Deps } from '../deps';
import { auth } from '../middleware/auth';
import { parseBody } from '../middleware/validate';
import { ApiError, badRequest, conflict, forbidden } from '../errors';
import { findVideo } from '../videos/find';
import { createVideo } from './create';
import { completeBody, initBody, presignedBody } from './schema';

/** Form B says `uploading` where Form A says `pending_upload` (SPEC §1). */
export const formBStatus = (s: string) => (s === 'pending_upload' ? 'uploading' : s);

/** Maps a rejected workflow update to the 4xx it stands for. */
export function updateError(err: unknown): unknown {
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    const code = err.cause.type ?? 'invalid_state';
    return code === 'invalid_state' ? conflict(code, err.cause.message) : badRequest(code, err.cause.message);
  }
  return err;
}

/** Moves a pending upload to processing once its object is in storage (idempotent). */
async function completeUpload(deps: Deps, row: VideoRow): Promise<{ status: string; started: boolean }> {
  if (row.status === 'processing' || row.status === 'ready') return { status: row.status, started: false };
  if (row.status === 'failed') throw conflict('invalid_state', 'The video has failed; use POST /videos/{id}/retry');
  const head = await deps.storage.head(row.storage_key);
  try {
    const done = await deps.temporal.workflow
      .getHandle(videoWorkflowId(row.id))
      .executeUpdate(completeUploadUpdate, { args: [{ objectSize: head ? head.size : null }] });
    return { status: done.status, started: done.first };
  } catch (err) {
    throw updateError(err);
  }
}

async function presign(deps: Deps, key: string, contentType: string, size: number) {
  return deps.storage.presignPut(key, { contentType, contentLength: size, expiresIn: deps.config.upload.urlTtlSeconds });
}

export function uploadRoutes(r: Router, deps: Deps): void {
  const { config } = deps;
  const uploadSource = (size: number, contentType: string) => ({
    kind: 'upload' as const,
    declaredSize: size,
    contentType,
    uploadTimeoutMs: (config.upload.urlTtlSeconds + config.upload.graceSeconds) * 1000,
  });

  // Form A / C
  r.post('/upload/init', async (ctx) => {
    const a = auth(ctx);
    const body = parseBody(ctx, initBody(config.upload.maxBytes));
    const v = await createVideo(deps, a, {
      filename: body.filename,
      contentType: body.content_type,
      size: body.size,
      title: body.title,
      description: body.description,
      visibility: body.visibility,
      folderId: body.folder_id,
      tags: body.tags,
      source: uploadSource(body.size, body.content_type),
    });
    const up = await presign(deps, v.storageKey, body.content_type, body.size);
    ctx.status = 201;
    ctx.body = {
      video_id: videoPublicId(v.id),
      upload_url: up.url,
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
    const body = parseBody(ctx, presignedBody(config.upload.maxBytes));
    if (body.workspace_id !== a.workspaceId) throw forbidden('workspace_mismatch', 'workspace_id is not the workspace of this API key');
    const v = await createVideo(deps, a, {
      filename: body.filename,
      contentType: body.content_type,
      size: body.file_size,
      title: body.title,
      description: body.description,
      visibility: body.visibility,
      folderId: body.folder_id,
      tags: body.tags,
      source: uploadSource(body.file_size, body.content_type),
    });
    const up = await presign(deps, v.storageKey, body.content_type, body.file_size);
    ok(ctx, 201, {
      video_id: v.id,
      upload_url: up.url,
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
