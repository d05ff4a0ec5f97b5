import { ActivityCancellationType, ApplicationFailure, condition, isCancellation, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { inheritedFairness, Priority, priority } from '../priority';
import { type OutputJob, outputJobsSignal, type OutputsWorkflowInput } from './defs';

/**
 * The jobs made after `ready` (SPEC §14) for one video, outside its entity workflow so they never
 * delay `ready` nor grow that history. Jobs arrive by signal-with-start; one that arrives while
 * another runs is run after it, so PATCHing mp4_support twice converges on the last value.
 * The workflow ends when no job is left: an idle video has no outputs workflow.
 */
export async function outputsWorkflow(input: OutputsWorkflowInput): Promise<void> {
  const { videoId, workspaceId } = input;
  // SPEC §25: files made behind `ready`, so behind every step to it; among workspaces, fair.
  const bulk = priority(Priority.bulk, inheritedFairness(workflowInfo().priority, workspaceId));
  const io = proxyActivities<Activities>({
    taskQueue: input.transcodeQueue,
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '2s', maximumInterval: '1 minute', maximumAttempts: 4, nonRetryableErrorTypes: ['invalid_media'] },
    // Cancelled by a deletion: the workflow ends only once the job has stopped writing files.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    priority: bulk,
  });
  const acts = proxyActivities<Activities>({ startToCloseTimeout: '1 minute', retry: { maximumInterval: '30s' }, priority: bulk });

  const pending = new Set<OutputJob>();
  setHandler(outputJobsSignal, (jobs) => jobs.forEach((j) => pending.add(j)));

  // Signal-with-start delivers the first jobs with the start; wait for them to be handled.
  await condition(() => pending.size > 0, '10 seconds');
  while (pending.size > 0) {
    const [job] = pending;
    pending.delete(job);
    try {
      if (job === 'static') await io.reconcileStaticRenditions({ videoId, workspaceId });
      else await io.makeStoryboard({ videoId, workspaceId });
    } catch (err) {
      if (isCancellation(err)) throw err;
      // A failed output never fails the video: its status says so in reads.
      const message = err instanceof ApplicationFailure || err instanceof Error ? err.message : String(err);
      await acts.markOutputFailed({ videoId, job, message });
    }
  }
}
