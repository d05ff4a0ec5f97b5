// Names shared by the workflow, the API and the activities. Pure: safe in the workflow sandbox.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { MaxResolution } from '../../lib/media/cap';

export type VideoStatus = 'pending_upload' | 'processing' | 'ready' | 'failed';
export type RenditionStatus = 'queued' | 'processing' | 'ready' | 'failed';

export const VideoIdKey = defineSearchAttributeKey('VideoId', SearchAttributeType.KEYWORD);
export const WorkspaceIdKey = defineSearchAttributeKey('WorkspaceId', SearchAttributeType.KEYWORD);
export const VideoStatusKey = defineSearchAttributeKey('VideoStatus', SearchAttributeType.KEYWORD);

export type VideoSource =
  | {
      kind: 'upload';
      declaredSize: number;
      contentType: string;
      uploadTimeoutMs: number;
      /**
       * When the upload URL stops working (epoch ms). Set for videos whose URL writes to a staging
       * key: after a deletion, the workflow sweeps the staging prefix once more at this time, since
       * a presigned S3 URL cannot be revoked (SPEC §12).
       */
      uploadUrlExpiresAt?: number;
    }
  | { kind: 'url'; url: string }
  /** SPEC §14 clip: the original is cut from another video's original (absent before outputs-v1). */
  | { kind: 'clip'; sourceStorageKey: string; startSeconds: number; endSeconds: number };

export interface VideoWorkflowInput {
  videoId: string;
  workspaceId: string;
  storageKey: string;
  source: VideoSource;
  /** Task queue of the ffmpeg/IO activities (config TEMPORAL_TRANSCODE_QUEUE). */
  transcodeQueue: string;
  /**
   * SPEC §25: the transcode workers' critical lane (TEMPORAL_CRITICAL_QUEUE), for the short steps
   * to `ready` (workflows/video/lanes.ts). Absent in runs started before it: all on transcodeQueue.
   */
  criticalQueue?: string;
  /** SPEC §14: the ladder stops at this rung (absent in histories recorded before outputs-v1). */
  maxResolution?: MaxResolution;
  /** SPEC §21: extra codecs (HEVC, AV1) as CMAF renditions next to the H.264 ladder (absent before encoding-codecs-v1). */
  codecs?: Array<'h264' | 'hevc' | 'av1'>;
  /** SPEC §24: the video has a mark (videos.watermark_id); its source is never passed through. Absent before watermark-v1. */
  watermarked?: boolean;
  /** Timings the tests shorten. */
  tuning?: { heartbeatTimeoutMs?: number };
  /**
   * Set when a run continues-as-new after processing ended (ready or failed): the new run starts
   * idle with this state, so idle videos never replay pipeline code (docs/transcoding.md).
   */
  resume?: VideoState;
}

export interface RenditionState {
  name: string;
  width: number;
  height: number;
  bitrate: number;
  status: RenditionStatus;
  progress: number;
  /** Measured against the source scaled to the rung once the rendition is done (issue 28). */
  quality?: { ssim_db: number; psnr_db: number } | null;
}

export interface VideoState {
  status: VideoStatus;
  progress: number;
  renditions: RenditionState[];
  errorCode?: string;
  errorMessage?: string;
  deleting: boolean;
}

/** What the API observed in storage; the update's validator judges it (SPEC §4). */
export interface UploadObservation {
  objectSize: number | null;
  /** The staging key the object was found at; the workflow moves it to the original key once. */
  sourceKey?: string;
}

export const videoStateQuery = defineQuery<VideoState>('videoState');
/** `first` is false when the upload had already been completed: complete and confirm are idempotent. */
export interface CompleteUploadResult {
  status: VideoStatus;
  first: boolean;
}

export const completeUploadUpdate = defineUpdate<CompleteUploadResult, [UploadObservation]>('completeUpload');
export const retryUpdate = defineUpdate<VideoState, [UploadObservation]>('retry');
export const deleteVideoSignal = defineSignal('deleteVideo');
export const renditionProgressSignal = defineSignal<[{ name: string; progress: number }]>('renditionProgress');
/**
 * One chunk's progress (0–99) in a ladder group (`rungs`, its rungs' names): the workflow weighs
 * each chunk by its length, so a long source's ladder progresses while its chunks encode
 * (issue 47), not only as each one ends.
 */
export const ladderProgressSignal = defineSignal<[{ rungs: string[]; chunk: number; progress: number }]>('ladderProgress');

export const videoWorkflowId = (videoId: string) => `video-${videoId}`;

/** Error codes the workflow reports; the API maps update rejections to 400s with these codes. */
export const ErrorCodes = {
  uploadMissing: 'upload_missing',
  uploadSizeMismatch: 'upload_size_mismatch',
  uploadExpired: 'upload_expired',
  invalidMedia: 'invalid_media',
  noVideoStream: 'no_video_stream',
  mediaTooLarge: 'media_too_large',
  importFailed: 'import_failed',
  processingFailed: 'processing_failed',
  invalidState: 'invalid_state',
} as const;
