import { ActivityCancellationType, ActivityFailure, ApplicationFailure, isCancellation, patched, proxyActivities, setHandler, uuid4, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { inheritedFairness, Priority, priority } from '../priority';
import { type AlignCaptionsWorkflowInput, alignRequestSignal } from './defs';

/** A transcript posted while the run was closing is aligned by that run (issue 45). */
export const ALIGN_AGAIN_PATCH = 'captions-align-again';

/**
 * Captions from a transcript (issue 37, POST /v1/videos/{id}/captions/{language}/align): one
 * alignment activity on the transcode queue (ffmpeg + the bounded aligner process, heartbeating),
 * then `video.captions.ready`, or the track marked failed and `video.captions.failed`. Started by
 * the API beside the video's entity workflow, so no existing history changes.
 *
 * The track is ready (or failed) a moment before the run closes; a new transcript posted in that
 * moment reaches this run as `alignRequest` (signal-with-start) and is aligned before it closes.
 */
export async function alignCaptionsWorkflow(input: AlignCaptionsWorkflowInput): Promise<void> {
  const { videoId, workspaceId, language } = input;
  // SPEC §25: asked for by a person who waits, so ahead of every ladder; among workspaces, fair.
  const onRequest = priority(Priority.onRequest, inheritedFairness(workflowInfo().priority, workspaceId));
  const io = proxyActivities<Activities>({
    taskQueue: input.transcodeQueue,
    startToCloseTimeout: '4 hours',
    heartbeatTimeout: '1 minute',
    // Only a crash of the worker is worth another attempt; a transcript that does not fit fails once.
    retry: { initialInterval: '2s', maximumInterval: '1 minute', maximumAttempts: 3 },
    priority: onRequest,
    // Cancelled by the video's deletion: the run ends only once the aligner has stopped writing.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const acts = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: { maximumInterval: '30s' }, priority: onRequest });
  const emit = (type: string, error?: { code: string; message: string }) =>
    acts.emitEvent({ eventId: `evt_${uuid4().replace(/-/g, '')}`, videoId, workspaceId, type, error, captions: { language } });
  let wanted = input.request;
  setHandler(alignRequestSignal, ({ request }) => {
    wanted = request;
  });
  for (;;) {
    const serving = wanted;
    try {
      const result = await io.alignCaptions({ videoId, workspaceId, language });
      if (result) await emit('video.captions.ready');
    } catch (err) {
      if (isCancellation(err)) throw err;
      const cause = err instanceof ActivityFailure ? err.cause : err;
      const code = cause instanceof ApplicationFailure && cause.type ? cause.type : 'processing_failed';
      const message = cause instanceof Error ? cause.message : String(cause);
      await acts.markCaptionsFailed({ videoId, language, code, message });
      await emit('video.captions.failed', { code, message });
    }
    // Histories recorded before the marker had no request after their first: they end here.
    if (wanted === serving || !patched(ALIGN_AGAIN_PATCH)) return;
  }
}
