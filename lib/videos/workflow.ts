import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { MaxResolution } from '../media/cap';
import { TIMED_OUT, within } from '../timeout';
import { type Fairness, Priority, priority } from '../../workflows/priority';
import { type VideoSource, type VideoState, type VideoWorkflowInput, VideoIdKey, videoStateQuery, VideoStatusKey, videoWorkflowId, WorkspaceIdKey } from '../../workflows/video/defs';

export type VideoRef = { videoId: string; workspaceId: string; storageKey: string; source: VideoSource; maxResolution?: MaxResolution; codecs?: Array<'h264' | 'hevc' | 'av1'> };

/** What of the configuration a video's workflow is started with: plain data, so it can wait in the start outbox. */
export type WorkflowQueues = Pick<Config['temporal'], 'taskQueue' | 'transcodeQueue' | 'heartbeatTimeoutMs'> & Partial<Pick<Config['temporal'], 'criticalQueue'>>;

/**
 * Task queue, id, input, search attributes and priority of a video's workflow, for start and
 * signalWithStart alike. SPEC §25: the workflow's tasks are the path to `ready`, so critical, and
 * its fairness (the workspace, weighted by plan) is what its activities queue under.
 */
export function videoWorkflowOptions(q: WorkflowQueues, p: VideoRef, status: string, fair: Fairness) {
  return {
    taskQueue: q.taskQueue,
    workflowId: videoWorkflowId(p.videoId),
    args: [{ ...p, transcodeQueue: q.transcodeQueue, ...(q.criticalQueue ? { criticalQueue: q.criticalQueue } : {}), tuning: { heartbeatTimeoutMs: q.heartbeatTimeoutMs } }] as [VideoWorkflowInput],
    priority: priority(Priority.critical, fair),
    typedSearchAttributes: [
      { key: VideoIdKey, value: p.videoId },
      { key: WorkspaceIdKey, value: p.workspaceId },
      { key: VideoStatusKey, value: status },
    ],
  };
}

/** The status a new video's workflow starts in. */
export const initialStatus = (source: VideoSource) => (source.kind === 'upload' ? 'pending_upload' : 'processing');

/** The workflow's live state, or undefined when it cannot answer quickly (reads fall back to Postgres). */
export async function queryVideoState(temporal: Client, videoId: string, timeoutMs = 2000): Promise<VideoState | undefined> {
  try {
    const state = await within(temporal.workflow.getHandle(videoWorkflowId(videoId)).query(videoStateQuery), timeoutMs);
    return state === TIMED_OUT ? undefined : state;
  } catch {
    return undefined;
  }
}
