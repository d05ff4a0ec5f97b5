import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { randomToken } from '../../lib/ids';
import { keys } from '../../lib/storage';
import type { VideoRow } from '../../lib/videos/read';
import { startPending } from '../../lib/videos/starts';
import { completeUploadUpdate, type UploadObservation, videoWorkflowId } from '../../workflows/video/defs';
import type { BaseDeps } from '../deps';
import { badRequest, conflict } from '../errors';

/** Maps a rejected workflow update to the 4xx it stands for. */
export function updateError(err: unknown): unknown {
  if (err instanceof WorkflowUpdateFailedError && err.cause instanceof ApplicationFailure) {
    const code = err.cause.type ?? 'invalid_state';
    return code === 'invalid_state' ? conflict(code, err.cause.message) : badRequest(code, err.cause.message);
  }
  return err;
}

/**
 * What storage holds for the upload. A PUT URL's staging object is first snapshotted to a key no
 * URL writes to, and that snapshot is what the workflow makes the original: a late PUT to the URL
 * (an S3 presigned URL cannot be revoked) can then never become the original (SPEC §12). A tus
 * upload's staging key only changes through the API, which refuses once the upload is closed.
 * Rows from before staging keys, and uploads already moved, have their original itself.
 */
export async function observeUpload(deps: BaseDeps, row: Pick<VideoRow, 'id' | 'workspace_id' | 'upload_key' | 'upload_protocol' | 'storage_key'>): Promise<UploadObservation> {
  if (row.upload_key) {
    let sourceKey: string | null = row.upload_key;
    if (row.upload_protocol !== 'tus') {
      const snap = keys.upload(row.workspace_id, row.id, `completed-${randomToken(12)}`);
      sourceKey = (await deps.storage.snapshot(row.upload_key, snap)) ? snap : null;
    }
    const staged = sourceKey ? await deps.storage.head(sourceKey) : null;
    if (staged && sourceKey) return { objectSize: staged.size, sourceKey };
  }
  const original = await deps.storage.head(row.storage_key);
  return { objectSize: original ? original.size : null };
}

/**
 * Moves a pending upload to processing once its object is in storage (idempotent). Every way an
 * upload completes goes through here: complete, confirm, and the last byte of a tus upload.
 */
export async function completeUpload(deps: BaseDeps, row: VideoRow): Promise<{ status: string; started: boolean }> {
  if (row.status === 'processing' || row.status === 'ready') return { status: row.status, started: false };
  if (row.status === 'failed') throw conflict('invalid_state', 'The video has failed; use POST /videos/{id}/retry');
  const observation = await observeUpload(deps, row);
  try {
    const complete = () => deps.temporal.workflow.getHandle(videoWorkflowId(row.id)).executeUpdate(completeUploadUpdate, { args: [observation] });
    // A client that uploads faster than the start outbox drains starts the workflow itself (or
    // finds it started by the outbox meanwhile: the update is asked again either way).
    const done = await complete().catch(async (err) => {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      await startPending(deps.db, deps.temporal, row.id);
      return complete();
    });
    // The URL closes now, not when the workflow gets to write `processing` (SPEC §12).
    await deps.db('videos').where({ id: row.id }).whereNull('upload_closed_at').update({ upload_closed_at: deps.db.fn.now() });
    // A snapshot the workflow did not take (the upload was already completed) is not needed.
    if (!done.first && observation.sourceKey && observation.sourceKey !== row.upload_key) await dropSnapshot(deps, observation.sourceKey);
    return { status: done.status, started: done.first };
  } catch (err) {
    if (observation.sourceKey && observation.sourceKey !== row.upload_key) await dropSnapshot(deps, observation.sourceKey);
    throw updateError(err);
  }
}

async function dropSnapshot(deps: BaseDeps, key: string): Promise<void> {
  await deps.storage.deletePrefix(key).catch((err) => deps.log.warn({ err, key }, 'could not remove an unused upload snapshot'));
}
