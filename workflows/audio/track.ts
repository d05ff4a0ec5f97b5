import { ActivityFailure, ApplicationFailure, proxyActivities, uuid4 } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { AudioTrackWorkflowInput } from './defs';

/**
 * One added audio track (POST /v1/videos/{id}/audio-tracks, api/audio/routes.ts): wait for its
 * upload (or fetch its URL), encode it on the video's timeline, publish it in the AUDIO group,
 * then `video.audio_track.ready` — or mark it failed with `video.audio_track.failed`. Runs
 * beside the video's entity workflow, as the outputs workflow does, so it never grows that history.
 */
export async function audioTrackWorkflow(input: AudioTrackWorkflowInput): Promise<void> {
  const { videoId, workspaceId, rendition } = input;
  const io = proxyActivities<Activities>({
    taskQueue: input.transcodeQueue,
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '2s', maximumInterval: '1 minute', maximumAttempts: 4, nonRetryableErrorTypes: ['invalid_media', 'import_failed', 'upload_missing'] },
  });
  const acts = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: { maximumInterval: '30s' } });
  const emit = (type: string, error?: { code: string; message: string }) =>
    acts.emitEvent({ eventId: `evt_${uuid4().replace(/-/g, '')}`, videoId, workspaceId, type, error });
  try {
    await io.receiveAddedTrack({ videoId, workspaceId, rendition, url: input.url, uploadDeadline: input.uploadDeadline });
    await io.encodeAddedTrack({ videoId, workspaceId, rendition });
    await emit('video.audio_track.ready');
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const code = cause instanceof ApplicationFailure && cause.type ? cause.type : 'processing_failed';
    const message = cause instanceof Error ? cause.message : String(cause);
    await acts.markAudioTrackFailed({ videoId, rendition, message });
    await emit('video.audio_track.failed', { code, message });
  }
}
