// Pure: just-in-time packaging (SPEC §23, docs/transcoding.md). From a source's keyframe index,
// the segment plan (boundaries at keyframes), the VOD media playlist that lists every segment at
// once, and the exact ffmpeg arguments that cut one segment (or all of them) later. A segment cut
// alone and the same segment from the whole pass are the same bytes (test/unit/jit.test.ts).
import { AUDIO_SAMPLE_RATE, GLOBAL_ARGS, joinPath } from './args';
import type { Rung } from './ladder';
import type { IndexedKeyframe } from './mp4index';
import type { StoredMark } from './watermark';

/** What the CDN needs to cut a segment of one rendition; stored beside its playlist (`jit.json`). */
export type JitPlan = {
  version: 1;
  /** The original's storage key and the demuxer it was opened with (the allow-list's `-f`). */
  storageKey: string;
  demuxer: string | null;
  /** `video`: the first video stream copied; `audio`: audio stream `stream` encoded to AAC. */
  kind: 'video' | 'audio';
  stream?: number;
  channels?: number;
  bitrate?: number;
  /**
   * A source the passthrough cannot take (HEVC, ProRes…): each video segment is this rung,
   * encoded from the decoded range (SPEC §23 item 2) rather than copied.
   */
  encode?: JitEncode;
  /** Seconds added to every timestamp so none is negative (the B-frame lead): the same for every segment. */
  offset: number;
  /**
   * Encoded plans since the on-request rungs: the original's start time (ffprobe's
   * `format.start_time`), where `-copyts` puts boundary 0; absent = 0.
   */
  start?: number;
  /** Encoded plans since the on-request rungs: the segments that do not start at a source keyframe (lib/media/jitEncode.ts). */
  midGop?: number[];
  /** Segment i spans [boundaries[i], boundaries[i + 1]); the last one ends at `durationSeconds`. */
  boundaries: number[];
  durationSeconds: number;
};

export type JitEncode = Pick<Rung, 'width' | 'height' | 'videoBitrate' | 'maxrate' | 'bufsize'> & {
  fps: number | null;
  preset: string;
  crf: number | null;
  /** SPEC §24: the video's mark, burnt into every segment (fetched by whoever encodes; absent: none). */
  mark?: StoredMark;
};

/** x264 presets a plan may name. */
export const JIT_PRESETS = ['ultrafast', 'superfast', 'veryfast', 'faster', 'fast', 'medium'] as const;
/** Segment length of an encoded plan: a short first wait after a seek (the ladder keeps HLS_SEGMENT_SECONDS). */
export const JIT_ENCODE_SEGMENT_SECONDS = 2;
/** Timestamps of encoded segments start this far after 0 at least: room for x264's B-frame lead. */
export const JIT_ENCODE_MIN_OFFSET = 0.2;

/** At most this many segments: 2 hours of 4 s segments is 1,800; 20 hours of 6 s is 12,000. */
export const MAX_JIT_SEGMENTS = 20_000;
/** Half a millisecond: keyframe times are printed to the microsecond, and frames are ≥ 4 ms apart. */
const EPS = 0.0005;

export const jitSegmentName = (i: number): string => `seg_${String(i).padStart(5, '0')}.ts`;

/**
 * The index of `seg_NNNNN.ts` in a plan, or null. Only the name the playlist lists: `seg_000012.ts`
 * (six digits, which the CDN's grammar also admits for the ladder's long sources) names no segment
 * of a plan, so it cuts nothing (it used to cut `seg_00012.ts` and then answer 404).
 */
export function jitSegmentIndex(plan: Pick<JitPlan, 'boundaries'>, name: string): number | null {
  const m = /^seg_([0-9]{5,6})\.ts$/.exec(name);
  if (!m) return null;
  const i = Number(m[1]);
  return i < plan.boundaries.length && jitSegmentName(i) === name ? i : null;
}

/**
 * Boundaries at keyframes: a segment ends at the first keyframe at least `segmentSeconds` after
 * its start (the HLS muxer's rule), and a tail shorter than a third of a segment joins the last.
 * Null when the keyframes cannot make a sane plan (none at the start, a negative or
 * non-increasing time, a gap over `maxGapSeconds`, too many segments).
 */
export function planJitSegments(keyframes: readonly number[], durationSeconds: number, segmentSeconds: number, maxGapSeconds: number): number[] | null {
  if (!(durationSeconds > 0) || keyframes.length === 0) return null;
  if (keyframes[0] < -EPS || keyframes[0] > 0.5) return null;
  const out = [keyframes[0]];
  let prev = keyframes[0];
  for (let i = 1; i < keyframes.length; i++) {
    const k = keyframes[i];
    if (!(k > prev + EPS)) return null;
    if (k - prev > maxGapSeconds) return null;
    prev = k;
    if (k >= durationSeconds - segmentSeconds / 3) break;
    if (k - out[out.length - 1] >= segmentSeconds - EPS) {
      out.push(k);
      if (out.length > MAX_JIT_SEGMENTS) return null;
    }
  }
  if (durationSeconds - prev > maxGapSeconds) return null;
  return out;
}

/**
 * Boundaries every `segmentSeconds` (a tail under a third of a segment joins the last): for an
 * encoded plan, where any frame can start a segment (the range is decoded), so no index is needed.
 */
export function gridJitSegments(durationSeconds: number, segmentSeconds: number): number[] | null {
  if (!(durationSeconds > 0) || !(segmentSeconds > 0)) return null;
  const out: number[] = [0];
  for (let t = segmentSeconds; t < durationSeconds - segmentSeconds / 3; t += segmentSeconds) {
    out.push(Math.round(t * 1e6) / 1e6);
    if (out.length > MAX_JIT_SEGMENTS) return null;
  }
  return out;
}
/** Durations of a plan's segments. */
export function jitDurations(plan: Pick<JitPlan, 'boundaries' | 'durationSeconds'>): number[] {
  const b = plan.boundaries;
  return b.map((start, i) => (i + 1 < b.length ? b[i + 1] : plan.durationSeconds) - start);
}

/** The VOD media playlist of a plan: every segment listed, ENDLIST, at once. */
export function jitPlaylist(plan: Pick<JitPlan, 'boundaries' | 'durationSeconds'>): string {
  const d = jitDurations(plan);
  const target = Math.max(1, Math.ceil(Math.max(...d) - EPS));
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${target}`, '#EXT-X-MEDIA-SEQUENCE:0', '#EXT-X-PLAYLIST-TYPE:VOD', '#EXT-X-INDEPENDENT-SEGMENTS'];
  d.forEach((s, i) => lines.push(`#EXTINF:${s.toFixed(6)},`, jitSegmentName(i)));
  lines.push('#EXT-X-ENDLIST', '');
  return lines.join('\n');
}

/** MPEG-TS overhead over the elementary stream (188-byte packets, PES headers): measured 3–5 %. */
export const TS_OVERHEAD = 1.06;

/** Peak and average bits/s of the video segments, from the index's byte offsets (before any cut). */
export function jitBandwidth(keyframes: readonly IndexedKeyframe[], totalBytes: number, plan: Pick<JitPlan, 'boundaries' | 'durationSeconds'>): { peak: number; average: number } {
  const at = new Map(keyframes.map((k) => [k.time, k.bytesBefore]));
  const d = jitDurations(plan);
  let peak = 0;
  plan.boundaries.forEach((start, i) => {
    const from = at.get(start) ?? 0;
    const to = i + 1 < plan.boundaries.length ? (at.get(plan.boundaries[i + 1]) ?? totalBytes) : totalBytes;
    if (d[i] > 0) peak = Math.max(peak, ((to - from) * 8 * TS_OVERHEAD) / d[i]);
  });
  return { peak: Math.ceil(peak), average: Math.ceil((totalBytes * 8 * TS_OVERHEAD) / plan.durationSeconds) };
}

const ts = (n: number): string => n.toFixed(6);

/** Timestamps as the source's (`-copyts`), shifted by the plan's offset, in 90 kHz MPEG-TS. */
function timing(plan: JitPlan): string[] {
  return ['-copyts', '-avoid_negative_ts', 'disabled', '-output_ts_offset', ts(plan.offset)];
}

/**
 * Segment `i` alone. Video: stream copy from its keyframe, split at the next one (the segment
 * muxer's cut). Audio: AAC of exactly its range. (An encoded plan's video segments are made by
 * onRequestEncodeArgs in lib/media/jitEncode.ts.)
 */
export function jitCutArgs(o: { plan: JitPlan; index: number; input: string; inputArgs?: readonly string[]; outputDir: string }): string[] {
  const { plan, index } = o;
  const start = plan.boundaries[index];
  const end = index + 1 < plan.boundaries.length ? plan.boundaries[index + 1] : plan.durationSeconds;
  if (plan.kind === 'audio') {
    return [
      ...GLOBAL_ARGS,
      '-ss', ts(Math.max(0, start)), '-t', ts(end - start),
      ...(o.inputArgs ?? []),
      '-i', o.input,
      '-map', `0:a:${plan.stream ?? 0}`, '-vn', '-sn', '-dn',
      '-c:a', 'aac', '-b:a', String(plan.bitrate ?? 128_000), '-ar', AUDIO_SAMPLE_RATE, '-ac', String(plan.channels ?? 2),
      ...timing(plan),
      '-f', 'mpegts', joinPath(o.outputDir, 'seg.ts'),
    ];
  }
  const last = index + 1 >= plan.boundaries.length;
  return [
    ...GLOBAL_ARGS,
    // Seek to just after the keyframe (lands on it); read a second past the end so the next keyframe arrives.
    '-ss', ts(Math.max(0, start + EPS)), ...(last ? [] : ['-t', ts(end - start + 1)]),
    ...(o.inputArgs ?? []),
    '-i', o.input,
    '-map', '0:v:0', '-c', 'copy',
    ...timing(plan),
    '-f', 'segment', '-segment_format', 'mpegts',
    ...(last ? ['-segment_time', '100000'] : ['-segment_times', ts(end - EPS)]),
    joinPath(o.outputDir, 'part%d.ts'),
  ];
}

/** The output file of jitCutArgs: the first part of the split, or the audio segment. */
export const jitCutOutput = (plan: JitPlan): string => (plan.kind === 'audio' ? 'seg.ts' : 'part0.ts');

/** Every video segment of the plan in one pass (the same bytes as each cut alone): `seg_%05d.ts`. */
export function jitWholeArgs(o: { plan: JitPlan; input: string; inputArgs?: readonly string[]; outputDir: string }): string[] {
  const cuts = o.plan.boundaries.slice(1).map((b) => ts(b - EPS));
  return [
    ...GLOBAL_ARGS,
    ...(o.inputArgs ?? []),
    '-i', o.input,
    '-map', '0:v:0', '-c', 'copy',
    ...timing(o.plan),
    '-f', 'segment', '-segment_format', 'mpegts',
    ...(cuts.length ? ['-segment_times', cuts.join(',')] : ['-segment_time', '100000']),
    joinPath(o.outputDir, 'seg_%05d.ts'),
  ];
}
