// What a pipeline (one processing run of a video) needs from the lifecycle in workflows/video/video.ts.
import type { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../../activities';
import type { VideoState, VideoStatus, VideoWorkflowInput } from '../defs';

type Proxy = ReturnType<typeof proxyActivities<Activities>>;

export interface PipelineContext {
  input: VideoWorkflowInput;
  /** The live state the query returns; pipelines update renditions and progress in place. */
  state: VideoState;
  /** Quick bookkeeping activities on the workflow queue. */
  acts: Proxy;
  /** ffmpeg and storage I/O on the transcode queue; cancelled (and awaited) on delete. */
  io: Proxy;
  setStatus(status: VideoStatus): Promise<void>;
  emit(type: string): Promise<void>;
  updateProgress(): void;
  /** Where a ladder group's chunk progress signals go (ladderProgressSignal); undefined stops them. */
  onLadderProgress(rungs: readonly string[], fn: ((chunk: number, pct: number) => void) | undefined): void;
  /** A job that may still write files after the pipeline unwinds; deletion waits for it. */
  track(job: Promise<unknown>): void;
}
