// Names shared by the added-track workflow, the API and the activities (SPEC §19). Pure.

export interface AudioTrackWorkflowInput {
  videoId: string;
  workspaceId: string;
  /** The row's key in audio_tracks (`x-<language>`). */
  rendition: string;
  transcodeQueue: string;
  /** Fetched from this URL (address guard), or else uploaded to the row's upload_key until this time (epoch ms). */
  url?: string;
  uploadDeadline?: number;
}

export const audioTrackWorkflowId = (videoId: string, rendition: string) => `audio-track-${videoId}-${rendition}`;
