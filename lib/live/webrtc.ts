// Pure: the WebRTC rendition (SPEC §22 "Every broadcast plays over WHEP", §24). WHEP forwards the
// source's own packets when WebRTC can carry them (WHIP: H.264 without B-frames, Opus); otherwise
// the session's ffmpeg encodes one more output for WHEP viewers — H.264 constrained baseline (no
// B-frames), zerolatency, 1 s keyframes, Opus — and PUTs it to the edge, which serves it instead of
// the source (ingest/webrtc/rendition.go).
import { planLadder } from '../media/ladder';
import { type Mark, markedFilter } from '../media/watermark';
import type { FeedInfo } from './feed-info';
import { edgePushSlave } from './push';

/** The tallest the rendition is (short side): WebRTC viewers are real-time, not the top quality. */
const MAX_SHORT = 720;
/** Keyframes every second: a new viewer waits at most that for its first picture (the edge cannot ask ffmpeg for one). */
const GOP_SECONDS = 1;

/** What the edge sees of the source (GET /streams/{ls}), when it sees it. */
export type EdgeSource = { protocol: string; videoCodec: string | null; audioCodec: string | null } | null;

/**
 * Why WHEP viewers need the rendition, or null when the source's packets can go to them as is:
 * a watermark (the source carries none), a video codec other than H.264, B-frames, or audio that is
 * not Opus (RTMP and SRT carry AAC; the feed the worker reads has AAC even for WHIP, so the
 * edge's view of the source's audio comes first).
 */
export function webrtcRenditionReason(o: { marked: boolean; feed: FeedInfo; edge: EdgeSource }): string | null {
  if (o.marked) return 'watermarked';
  const video = o.edge?.videoCodec ?? o.feed.videoCodec;
  if (video !== 'h264') return `video codec ${video}`;
  if (o.feed.bFrames) return 'B-frames';
  const audio = o.edge ? o.edge.audioCodec : o.feed.audioCodec;
  if (audio && audio !== 'opus') return `audio codec ${audio}`;
  return null;
}

export interface WebrtcRendition {
  /** The edge's ingest URL (`{edge}/webrtc/{ls}/ingest`). */
  url: string;
  width: number;
  height: number;
  videoBitrate: number;
}

/** The rendition's size and bitrate: the feed's tallest ladder rung up to 720p. */
export function planWebrtcRendition(f: FeedInfo, url: string): WebrtcRendition {
  const rungs = planLadder({ width: f.width, height: f.height }).filter((r) => Math.min(r.width, r.height) <= MAX_SHORT);
  const r = rungs[rungs.length - 1];
  return { url, width: r.width, height: r.height, videoBitrate: r.videoBitrate };
}

/** The output's ffmpeg arguments (after the ladder's, in the same command: one decode). */
export function webrtcOutputArgs(o: WebrtcRendition & { hasAudio: boolean; preset: string; mark?: Mark | null; headers?: string; rate?: string[] }): string[] {
  const args = ['-map', '0:v:0'];
  if (o.hasAudio) args.push('-map', '0:a:0');
  args.push(
    '-c:v', 'libx264', '-preset', o.preset, '-tune', 'zerolatency', '-profile:v', 'baseline', '-bf', '0', '-pix_fmt', 'yuv420p', ...(o.rate ?? []),
    '-vf', markedFilter({ chain: `scale=${o.width}:${o.height}`, frame: o, mark: o.mark }),
    '-b:v', String(o.videoBitrate), '-maxrate', String(o.videoBitrate), '-bufsize', String(Math.round(o.videoBitrate / 2)),
    '-force_key_frames', `expr:gte(t,n_forced*${GOP_SECONDS})`, '-sc_threshold', '0',
  );
  if (o.hasAudio) args.push('-c:a', 'libopus', '-b:a', '64000', '-ar', '48000', '-ac', '2', '-application', 'lowdelay');
  args.push('-f', 'tee', edgePushSlave(o.url, o.headers));
  return args;
}
