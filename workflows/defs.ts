// Names shared by the workflow, the API and the activities. Pure: safe in the workflow sandbox.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

export type VideoStatus = 'pending_upload' | 'processing' | 'ready' | 'failed';
export type RenditionStatus = 'queued' | 'processing' | 'ready' | 'failed';

export const VideoIdKey = defineSearchAttributeKey('VideoId', SearchAttributeType.KEYWORD);
export const WorkspaceIdKey = defineSearchAttributeKey('WorkspaceId', SearchAttributeType.KEYWORD);
export const VideoStatusKey = defineSearchAttributeKey('VideoStatus', SearchAttributeType.KEYWORD);

export type VideoSource =
  | { kind: 'upload'; declaredSize: number; contentType: string; uploadTimeoutMs: number }
  | { kind: 'url'; url: string };

export interface VideoWorkflowInput {
  videoId: string;
  workspaceId: string;
  storageKey: string;
  source: VideoSource;
  /** Task queue of the ffmpeg/IO activities (config TEMPORAL_TRANSCODE_QUEUE). */
  transcodeQueue: string;
  /** Timings the tests shorten. */
  tuning?: { heartbeatTimeoutMs?: number };
}

export interface RenditionState {
  name: string;
  width: number;
  height: number;
  bitrate: number;
  status: RenditionStatus;
  progress: number;
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

export const videoWorkflowId = (videoId: string) => `video-${videoId}`;

/** Error codes the workflow reports; the API maps update rejections to 400s with these codes. */
export const ErrorCodes = {
  uploadMissing: 'upload_missing',
  uploadSizeMismatch: 'upload_size_mismatch',
  uploadExpired: 'upload_expired',
  invalidMedia: 'invalid_media',
  noVideoStream: 'no_video_stream',
  importFailed: 'import_failed',
  processingFailed: 'processing_failed',
  invalidState: 'invalid_state',
} as const;
