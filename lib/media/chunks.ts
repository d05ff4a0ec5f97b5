// Pure: cutting a long source into keyframe-aligned chunks, encoding one chunk into every rung of
// a group with one decode, and stitching the chunks' playlists back into one VOD playlist.
import {
  AUDIO_CHANNELS,
  AUDIO_SAMPLE_RATE,
  DEFAULT_PRESET,
  GLOBAL_ARGS,
  h264Level,
  hlsArgs,
  joinPath,
  keyframeArgs,
  levelString,
  seconds,
  videoRateArgs,
  type RateControl,
} from './args';
import type { Rung } from './ladder';
import { markedFilter, type Mark } from './watermark';

/** [start, end) in source seconds; `end` null means "to the end of the source". */
export type Chunk = { index: number; start: number; end: number | null };

/** Segment numbers of chunk k start at k × SEGMENTS_PER_CHUNK, so names sort and never collide. */
export const SEGMENTS_PER_CHUNK = 1000;
export const MAX_CHUNKS = 999;
// Seeks land just before the keyframe so rounding in its printed time can never drop it.
const SEEK_MARGIN = 0.001;
// ffmpeg's AAC encoder primes 1024 samples (at 48 kHz, as we encode) and shifts the first chunk's
// timestamps by that much to keep them non-negative; later chunks get the same shift explicitly,
// so the stitched video timeline has no step at the boundaries.
const AAC_PRIMING_SECONDS = 1024 / 48_000;

/**
 * Chunks of about `chunkSeconds` that start on source keyframes. A source no longer than
 * `thresholdSeconds` (or of unknown duration) is one chunk. A tail shorter than half a chunk
 * joins the chunk before it. Never more than MAX_CHUNKS (the chunk length grows instead).
 */
export function planChunks(p: { keyframes: readonly number[]; durationSeconds: number | null; chunkSeconds: number; thresholdSeconds: number }): Chunk[] {
  const { keyframes, durationSeconds: duration } = p;
  if (duration === null || duration <= p.thresholdSeconds || keyframes.length < 2) return [{ index: 0, start: 0, end: null }];
  const target = Math.max(p.chunkSeconds, duration / MAX_CHUNKS);
  const starts = [0];
  for (const k of keyframes) {
    const last = starts[starts.length - 1];
    if (k - last >= target && duration - k >= target / 2) starts.push(k);
  }
  return starts.map((start, index) => ({ index, start, end: index + 1 < starts.length ? starts[index + 1] : null }));
}

export type ChunkLadderOptions = {
  input: string;
  /** Allow-list options for the input (SafeInput.inputArgs); they go right before `-i`. */
  inputArgs?: readonly string[];
  outputRoot: string;
  rungs: readonly Rung[];
  chunk: Chunk;
  hasAudio: boolean;
  segmentSeconds: number;
  fps?: number | null;
  preset?: string;
  /** Default capped CRF; the same for every chunk of a rung, so the joins show no quality step. */
  rateControl?: RateControl;
  /** SPEC §24: burnt into every rung after its scale (lib/media/watermark.ts). */
  mark?: Mark | null;
};

/**
 * One chunk of the source into every rung of `rungs` from ONE ffmpeg (decode once, split, scale
 * per rung), each rung an HLS output in `<outputRoot>/<rung>/`: segments
 * `seg_<chunk × 1000 + n>.ts` and the chunk's playlist `chunk_<index>.m3u8`. Timestamps stay
 * the source's (-copyts), so stitched chunks play as one timeline.
 */
export function chunkLadderArgs(o: ChunkLadderOptions): string[] {
  const { chunk, rungs, hasAudio, fps } = o;
  if (rungs.length === 0) throw new RangeError('chunkLadderArgs needs at least one rung');
  const preset = o.preset ?? DEFAULT_PRESET;
  const seek: string[] = [];
  if (chunk.start > 0) seek.push('-ss', seconds(Math.max(0, chunk.start - SEEK_MARGIN)));
  if (chunk.end !== null) seek.push('-t', seconds(chunk.end - chunk.start));
  const rung = (r: Rung, i: number, input: string) => markedFilter({ chain: `scale=${r.width}:${r.height}`, frame: r, mark: o.mark, input, output: `[o${i}]`, tag: `wm${i}` });
  const split = rungs.length === 1 ? rung(rungs[0], 0, '[0:v:0]') : [
    `[0:v:0]split=${rungs.length}${rungs.map((_, i) => `[v${i}]`).join('')}`,
    ...rungs.map((r, i) => rung(r, i, `[v${i}]`)),
  ].join(';');
  const offset = chunk.start > 0 && hasAudio ? ['-output_ts_offset', AAC_PRIMING_SECONDS.toFixed(6)] : [];
  const outputs = rungs.flatMap((r, i) => [
    '-map', `[o${i}]`,
    ...(hasAudio ? ['-map', '0:a:0'] : []),
    '-c:v', 'libx264',
    '-preset', preset,
    '-profile:v', 'high',
    '-level:v', levelString(h264Level(r, fps)),
    '-pix_fmt', 'yuv420p',
    ...videoRateArgs(r, o.rateControl),
    ...keyframeArgs(o.segmentSeconds, fps),
    ...(hasAudio ? ['-c:a', 'aac', '-b:a', String(r.audioBitrate), '-ar', AUDIO_SAMPLE_RATE, '-ac', AUDIO_CHANNELS] : ['-an']),
    ...offset,
    ...hlsArgs(o.segmentSeconds),
    '-start_number', String(chunk.index * SEGMENTS_PER_CHUNK),
    '-hls_segment_filename', joinPath(joinPath(o.outputRoot, r.name), 'seg_%05d.ts'),
    joinPath(joinPath(o.outputRoot, r.name), chunkPlaylistName(chunk.index)),
  ]);
  return [...GLOBAL_ARGS, ...seek, '-copyts', ...(o.inputArgs ?? []), '-i', o.input, '-filter_complex', split, ...outputs];
}

export const chunkPlaylistName = (index: number): string => `chunk_${String(index).padStart(5, '0')}.m3u8`;

export type PlaylistSegment = { seconds: number; uri: string };

/** The segments of a media playlist, in order. */
export function parseMediaPlaylist(text: string): PlaylistSegment[] {
  const out: PlaylistSegment[] = [];
  let pending: number | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXTINF:')) pending = Number(line.slice(8).split(',')[0]);
    else if (line && !line.startsWith('#') && pending !== null) {
      out.push({ seconds: pending, uri: line });
      pending = null;
    }
  }
  return out;
}

/** One VOD playlist from the chunks' playlists, in chunk order: no discontinuity, timestamps run on. */
export function stitchPlaylists(chunkPlaylists: readonly string[]): string {
  const segments = chunkPlaylists.flatMap(parseMediaPlaylist);
  const target = Math.max(1, ...segments.map((s) => Math.ceil(s.seconds)));
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${target}`, '#EXT-X-MEDIA-SEQUENCE:0', '#EXT-X-PLAYLIST-TYPE:VOD', '#EXT-X-INDEPENDENT-SEGMENTS'];
  for (const s of segments) lines.push(`#EXTINF:${s.seconds.toFixed(6)},`, s.uri);
  lines.push('#EXT-X-ENDLIST');
  return `${lines.join('\n')}\n`;
}
