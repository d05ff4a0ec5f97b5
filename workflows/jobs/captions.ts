import { ActivityFailure, ApplicationFailure, proxyActivities, uuid4 } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { AlignCaptionsWorkflowInput } from './defs';

/**
 * Captions from a transcript (issue 37, POST /v1/videos/{id}/captions/{language}/align): one
 * alignment activity on the transcode queue (ffmpeg + the bounded aligner process, heartbeating),
 * then `video.captions.ready`, or the track marked failed and `video.captions.failed`. Started by
 * the API beside the video's entity workflow, so no existing history changes.
 */
export async function alignCaptionsWorkflow(input: AlignCaptionsWorkflowInput): Promise<void> {
  const { videoId, workspaceId, language } = input;
  const io = proxyActivities<Activities>({
    taskQueue: input.transcodeQueue,
    startToCloseTimeout: '4 hours',
    heartbeatTimeout: '1 minute',
    // Only a crash of the worker is worth another attempt; a transcript that does not fit fails once.
    retry: { initialInterval: '2s', maximumInterval: '1 minute', maximumAttempts: 3 },
  });
  const acts = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: { maximumInterval: '30s' } });
  const emit = (type: string, error?: { code: string; message: string }) =>
    acts.emitEvent({ eventId: `evt_${uuid4().replace(/-/g, '')}`, videoId, workspaceId, type, error, captions: { language } });
  try {
    const result = await io.alignCaptions({ videoId, workspaceId, language });
    if (result) await emit('video.captions.ready');
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    const code = cause instanceof ApplicationFailure && cause.type ? cause.type : 'processing_failed';
    const message = cause instanceof Error ? cause.message : String(cause);
    await acts.markCaptionsFailed({ videoId, language, code, message });
    await emit('video.captions.failed', { code, message });
  }
}
