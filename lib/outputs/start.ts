import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Config } from '../config';
import { type OutputJob, outputJobsSignal, type OutputsWorkflowInput, outputsWorkflowId } from '../../workflows/jobs/defs';

/** Runs jobs in the video's outputs workflow, starting it when none runs (signal-with-start). */
export async function requestOutputJobs(temporal: Client, config: Config, p: { videoId: string; workspaceId: string; jobs: OutputJob[] }): Promise<void> {
  await temporal.workflow.signalWithStart('outputsWorkflow', {
    taskQueue: config.temporal.taskQueue,
    workflowId: outputsWorkflowId(p.videoId),
    args: [{ videoId: p.videoId, workspaceId: p.workspaceId, transcodeQueue: config.temporal.transcodeQueue } satisfies OutputsWorkflowInput],
    signal: outputJobsSignal,
    signalArgs: [p.jobs],
  });
}

/**
 * Before a deletion removes a video's files: cancels its outputs workflow, if one runs, and waits
 * until its job has stopped writing (its activities settle before the workflow ends).
 */
export async function stopOutputJobs(temporal: Client, videoId: string, timeoutMs = 120_000): Promise<void> {
  const handle = temporal.workflow.getHandle(outputsWorkflowId(videoId));
  try {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') return;
    await handle.cancel();
    await Promise.race([handle.result().catch(() => undefined), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}
