import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import { type ConnectedSignal, connectedSignal, type LiveWorkflowInput, liveWorkflowId } from '../../workflows/live/defs';
import { type Fairness, Priority, priority } from '../../workflows/priority';

/** Task queue, id, input and priority (SPEC §25) of a live stream's entity workflow, for start and signalWithStart alike. */
export function liveWorkflowOptions(config: Config, liveStreamId: string, workspaceId: string, fair: Fairness) {
  return {
    taskQueue: config.temporal.taskQueue,
    workflowId: liveWorkflowId(liveStreamId),
    args: [{ liveStreamId, workspaceId, liveQueue: config.live.queue, tuning: { heartbeatTimeoutMs: config.live.heartbeatTimeoutMs } }] as [LiveWorkflowInput],
    priority: priority(Priority.critical, fair),
  };
}

/** Starts the workflow unless it runs already (create is retried by clients; the media server may be first). */
export async function ensureLiveWorkflow(temporal: Client, config: Config, liveStreamId: string, workspaceId: string, fair: Fairness): Promise<void> {
  try {
    await temporal.workflow.start('liveStreamWorkflow', { ...liveWorkflowOptions(config, liveStreamId, workspaceId, fair), workflowIdConflictPolicy: 'USE_EXISTING' });
  } catch (err) {
    if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
  }
}

/** The media server's "an encoder is publishing": starts the workflow if it is not running. */
export async function signalConnected(temporal: Client, config: Config, liveStreamId: string, workspaceId: string, fair: Fairness, s: ConnectedSignal): Promise<void> {
  await temporal.workflow.signalWithStart('liveStreamWorkflow', { ...liveWorkflowOptions(config, liveStreamId, workspaceId, fair), signal: connectedSignal, signalArgs: [s] });
}
