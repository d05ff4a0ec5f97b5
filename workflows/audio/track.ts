import { ActivityCancellationType, ActivityFailure, ApplicationFailure, isCancellation, patched, proxyActivities, uuid4, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { inheritedFairness, Priority, priority } from '../priority';
import type { AudioTrackWorkflowInput } from './defs';

/**
 * One added audio track (POST /v1/videos/{id}/audio-tracks, api/audio/routes.ts): wait for its
 * upload (or fetch its URL), encode it on the video's timeline, publish it in the AUDIO group,
 * then `video.audio_track.ready` — or mark it failed with `video.audio_track.failed`. Runs
 * beside the video's entity workflow, as the outputs workflow does, so it never grows that history.
 */
export async function audioTrackWorkflow(input: AudioTrackWorkflowInput): Promise<void> {
  const { videoId, workspaceId, rendition } = input;
  // SPEC §25: asked for by a person who waits, so ahead of every ladder; among workspaces, fair.
  const onRequest = priority(Priority.onRequest, inheritedFairness(workflowInfo().priority, workspaceId));
  const io = proxyActivities<Activities>({
    taskQueue: input.transcodeQueue,
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '2s', maximumInterval: '1 minute', maximumAttempts: 4, nonRetryableErrorTypes: ['invalid_media', 'import_failed', 'upload_missing'] },
    priority: onRequest,
    // Cancelled by the track's or the video's deletion: the run ends once the encode has stopped writing.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const acts = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: { maximumInterval: '30s' }, priority: onRequest });
  // Waiting for an upload is a HEAD a second, then a move: not an encode. On the transcode queue
  // it queued behind every encode in the fleet (a video's ladder, other tracks' waits), so a PUT
  // file sat unnoticed for minutes (issue 33 row 11). It runs on this workflow's own queue.
  const waiter = proxyActivities<Activities>({
    startToCloseTimeout: '2 hours',
    // Short: a deleted track's wait hears its cancellation with the next heartbeat flush (0.8x this).
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '2s', maximumInterval: '1 minute', maximumAttempts: 4, nonRetryableErrorTypes: ['upload_missing'] },
    priority: onRequest,
  });
  const emit = (type: string, error?: { code: string; message: string }) =>
    acts.emitEvent({ eventId: `evt_${uuid4().replace(/-/g, '')}`, videoId, workspaceId, type, error });
  try {
    // A URL is fetched (bytes through this process): that stays with the media workers.
    const receiver = input.url === undefined && patched('audio-track-upload-wait-orchestration') ? waiter : io;
    await receiver.receiveAddedTrack({ videoId, workspaceId, rendition, url: input.url, uploadDeadline: input.uploadDeadline });
    await io.encodeAddedTrack({ videoId, workspaceId, rendition });
    await emit('video.audio_track.ready');
  } catch (err) {
    // Deleted: nothing to report, and nothing may be scheduled in a cancelled run.
    if (isCancellation(err)) throw err;
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const code = cause instanceof ApplicationFailure && cause.type ? cause.type : 'processing_failed';
    const message = cause instanceof Error ? cause.message : String(cause);
    await acts.markAudioTrackFailed({ videoId, rendition, message });
    await emit('video.audio_track.failed', { code, message });
  }
}
