// Names shared by the output jobs' workflow, the API and the activities. Pure.
import { defineSignal } from '@temporalio/workflow';

/** `static`: MP4/M4A downloads as mp4_support says (adds and removes); `storyboard`: seek previews. */
export type OutputJob = 'static' | 'storyboard';

export interface OutputsWorkflowInput {
  videoId: string;
  workspaceId: string;
  transcodeQueue: string;
}

/** Adds jobs to the video's outputs workflow; signal-with-start creates it when none runs. */
export const outputJobsSignal = defineSignal<[OutputJob[]]>('outputJobs');

export const outputsWorkflowId = (videoId: string) => `outputs-${videoId}`;

/** Captions from a transcript (issue 37): the transcript waits in storage (outputKeys.transcript). */
export interface AlignCaptionsWorkflowInput {
  videoId: string;
  workspaceId: string;
  /** Canonical BCP-47 tag of the track (`en`, `en-GB`, `fr`). */
  language: string;
  transcodeQueue: string;
  /** The POST that started it (absent before align-again): a run aligns until it has served the last one. */
  request?: string;
}

/**
 * A transcript posted for a track whose workflow still runs (between the track turning ready or
 * failed and the run closing): sent with signal-with-start, so it starts a run when none is open.
 */
export const alignRequestSignal = defineSignal<[{ request: string }]>('alignRequest');

export const alignCaptionsWorkflowId = (videoId: string, language: string) => `captions-align-${videoId}-${language}`;
