import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { MaxResolution } from '../media/cap';
import { TIMED_OUT, within } from '../timeout';
import { type VideoSource, type VideoState, type VideoWorkflowInput, VideoIdKey, videoStateQuery, VideoStatusKey, videoWorkflowId, WorkspaceIdKey } from '../../workflows/defs';

type VideoRef = { videoId: string; workspaceId: string; storageKey: string; source: VideoSource; maxResolution?: MaxResolution };

/** Task queue, id, input and search attributes of a video's workflow, for start and signalWithStart alike. */
export function videoWorkflowOptions(config: Config, p: VideoRef, status: string) {
  return {
    taskQueue: config.temporal.taskQueue,
    workflowId: videoWorkflowId(p.videoId),
    args: [{ ...p, transcodeQueue: config.temporal.transcodeQueue, tuning: { heartbeatTimeoutMs: config.temporal.heartbeatTimeoutMs } }] as [VideoWorkflowInput],
    typedSearchAttributes: [
      { key: VideoIdKey, value: p.videoId },
      { key: WorkspaceIdKey, value: p.workspaceId },
      { key: VideoStatusKey, value: status },
    ],
  };
}

export function startVideoWorkflow(temporal: Client, config: Config, p: VideoRef) {
  return temporal.workflow.start('videoWorkflow', videoWorkflowOptions(config, p, p.source.kind === 'upload' ? 'pending_upload' : 'processing'));
}

/** The workflow's live state, or undefined when it cannot answer quickly (reads fall back to Postgres). */
export async function queryVideoState(temporal: Client, videoId: string, timeoutMs = 2000): Promise<VideoState | undefined> {
  try {
    const state = await within(temporal.workflow.getHandle(videoWorkflowId(videoId)).query(videoStateQuery), timeoutMs);
    return state === TIMED_OUT ? undefined : state;
  } catch {
    return undefined;
  }
}
