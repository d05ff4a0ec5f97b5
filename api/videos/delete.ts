import { workspaceFairness } from '../../lib/fairness';
import { cancelVideoJobs } from '../../lib/videos/jobs';
import { videoWorkflowOptions } from '../../lib/videos/workflow';
import type { VideoRow } from '../../lib/videos/read';
import { deleteVideoSignal, type VideoSource } from '../../workflows/video/defs';
import type { Deps } from '../deps';
import { unavailable } from '../errors';

/** The input a video's workflow would have been started with, for a deletion that must start it again. */
function reconstructInput(deps: Deps, row: VideoRow): VideoSource {
  if (row.source_url) return { kind: 'url', url: row.source_url };
  const { upload } = deps.config;
  return {
    kind: 'upload',
    declaredSize: row.size_bytes ?? 0,
    contentType: row.content_type ?? 'application/octet-stream',
    uploadTimeoutMs: (upload.urlTtlSeconds + upload.graceSeconds) * 1000,
  };
}

/**
 * Hands the deletion to the video's workflow, which cancels in-flight work, removes the files,
 * emits `video.deleted` and then removes the row. signalWithStart signals a running workflow, and
 * starts one to do the deletion when none runs (terminated by an operator, say), so the files
 * never outlive the request.
 */
async function requestDeletion(deps: Deps, row: VideoRow): Promise<void> {
  const { config, temporal } = deps;
  const fair = await workspaceFairness(deps.db, row.workspace_id);
  await temporal.workflow.signalWithStart('videoWorkflow', {
    ...videoWorkflowOptions(config.temporal, { videoId: row.id, workspaceId: row.workspace_id, storageKey: row.storage_key, source: reconstructInput(deps, row) }, 'deleting', fair),
    signal: deleteVideoSignal,
    signalArgs: [],
  });
}

/**
 * Deletes a video the way DELETE /videos/{id} does: hidden at once (every read filters on
 * deleted_at, and the storage counter stops counting it in the same statement), then the
 * workflow does the rest. False when it was already deleted. Used by the videos route and by tus
 * (termination, a failed creation-with-upload), so a given-up upload frees its reservation now.
 */
export async function deleteVideo(deps: Deps, row: VideoRow, log?: { error(o: object, m: string): void }): Promise<boolean> {
  const { db } = deps;
  const n = await db('videos').where({ id: row.id }).whereNull('deleted_at').update({ deleted_at: db.fn.now() });
  if (!n) return false;
  try {
    await requestDeletion(deps, row);
  } catch (err) {
    // Without the workflow nobody would remove the files: show the video again and say so.
    await db('videos').where({ id: row.id }).update({ deleted_at: null });
    log?.error({ err, videoId: row.id }, 'could not hand the deletion to the workflow');
    throw unavailable();
  }
  // SPEC §25: its queued and running jobs stop now, not when the workflow's file removal gets a
  // transcode slot (which cancels them again, and waits for them, before the files go).
  await cancelVideoJobs(deps.temporal, deps.db, row.id).catch((err) => log?.error({ err, videoId: row.id }, 'could not cancel the deleted video\'s jobs; its workflow will'));
  return true;
}
