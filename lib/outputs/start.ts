import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { type OutputJob, outputJobsSignal, type OutputsWorkflowInput, outputsWorkflowId } from '../../workflows/jobs/defs';
import { type Fairness, Priority, priority } from '../../workflows/priority';

/**
 * Runs jobs in the video's outputs workflow, starting it when none runs (signal-with-start), as
 * bulk work of the workspace (SPEC §25).
 */
export async function requestOutputJobs(temporal: Client, config: Config, p: { videoId: string; workspaceId: string; jobs: OutputJob[]; fair: Fairness }): Promise<void> {
  await temporal.workflow.signalWithStart('outputsWorkflow', {
    taskQueue: config.temporal.taskQueue,
    workflowId: outputsWorkflowId(p.videoId),
    args: [{ videoId: p.videoId, workspaceId: p.workspaceId, transcodeQueue: config.temporal.transcodeQueue } satisfies OutputsWorkflowInput],
    priority: priority(Priority.bulk, p.fair),
    signal: outputJobsSignal,
    signalArgs: [p.jobs],
  });
}
