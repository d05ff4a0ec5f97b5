/** What the live worker's probe of a broadcast's feed found (lib/live/feed.ts probeFeed): the ladder (ladder.ts) and the WebRTC rendition (webrtc.ts) are planned from it. */
export interface FeedInfo {
  videoCodec: string | null;
  audioCodec: string | null;
  width: number;
  height: number;
  fps: number | null;
  /** bits/s the encoder declares (RTMP metadata), when it does. */
  bitrate: number | null;
  /** The video has B-frames (ffprobe's has_b_frames; WebRTC viewers cannot be given it as is). */
  bFrames?: boolean;
}
