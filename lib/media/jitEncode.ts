// Pure: rungs encoded segment by segment on request (SPEC §23 second round, docs/transcoding.md).
// A source the passthrough refuses plays at `ready` from rungs up to 1080p whose segments are
// encoded the first time a player asks; the ladder encoded behind it makes the same segments
// (same boundaries, timestamps and encoder settings) and writes them over, so a player that
// switches mid-stream between the two sees one continuous rendition. Both encodes are built here,
// from the same per-rung pieces (onRequestFilter, onRequestVideoArgs): a filter added there (a
// watermark) reaches every on-request segment and every ladder segment alike.
import { GLOBAL_ARGS, h264Level, joinPath, levelString, videoRateArgs, type RateControl } from './args';
import { MAX_CHUNKS } from './chunks';
import { jitSegmentName, MAX_JIT_SEGMENTS, type JitEncode, type JitPlan } from './jit';
import { markedFilter, type Mark } from './watermark';

/** Target length of an on-request segment: the first wait after a seek is one such encode. */
export const ON_REQUEST_SEGMENT_SECONDS = 2;
/** A segment is at most this many targets long when that lets it start at a source keyframe. */
const MAX_SEGMENT_FACTOR = 1.5;
/** Keyframes come only from the boundaries (forced); x264 places none of its own below this many frames. */
export const NO_NATURAL_KEYFRAMES = '10000';
/** Half a millisecond: times are printed to the microsecond, frames are ≥ 4 ms apart. */
const EPS = 0.0005;

const ts = (n: number): string => n.toFixed(6);

/**
 * Segment boundaries for on-request encodes, on the source's own keyframes where it has them: a
 * segment starting at a keyframe is decoded from its own first frame, one starting between
 * keyframes is decoded from the keyframe before it (the frames before its start are decoded and
 * dropped). Each segment is the target long, or up to 1.5× (or down to half) to end at a keyframe;
 * where keyframes are further apart, it ends on the target's grid. `keyframes` are times from
 * the source's start, ascending. `midGop`: the segments that do not start at a keyframe.
 */
export function planEncodeSegments(keyframes: readonly number[], durationSeconds: number, target = ON_REQUEST_SEGMENT_SECONDS): { boundaries: number[]; midGop: number[] } | null {
  if (!(durationSeconds > 0) || !(target > 0)) return null;
  const max = target * MAX_SEGMENT_FACTOR;
  const keys = keyframes.filter((k) => Number.isFinite(k) && k > EPS && k < durationSeconds - EPS);
  const boundaries = [0];
  const midGop: number[] = [];
  let prev = 0;
  let at = 0; // keys[at] is the first keyframe after `prev`
  while (durationSeconds - prev > max) {
    while (at < keys.length && keys[at] <= prev + EPS) at++;
    let key: number | undefined;
    let late: number | undefined;
    for (let j = at; j < keys.length && keys[j] <= prev + max + EPS; j++) {
      if (keys[j] >= prev + target - EPS) {
        key = keys[j];
        break;
      }
      if (keys[j] > prev + target / 2) late = keys[j];
    }
    key ??= late;
    const next = Math.round((key ?? prev + target) * 1e6) / 1e6;
    // No segment shorter than a third of the target at the end: the last one takes the rest.
    if (durationSeconds - next < target / 3) break;
    // The first segment starts at the first frame, which is a keyframe; the others where chosen.
    if (key === undefined) midGop.push(boundaries.length);
    boundaries.push(next);
    prev = next;
    if (boundaries.length > MAX_JIT_SEGMENTS) return null;
  }
  return { boundaries, midGop };
}

/** A run of the ladder's segments: `first`…`last` (inclusive), their start times, and where the last one ends. */
export type AlignedChunk = { index: number; first: number; last: number; boundaries: number[]; end: number };

/**
 * The ladder's chunks over an on-request plan: each a run of whole segments about `chunkSeconds`
 * long, starting where possible at a segment that starts at a source keyframe (so its decode wastes
 * nothing); a tail under half a chunk joins the last. A source no longer than `thresholdSeconds`
 * is one chunk; never more than MAX_CHUNKS (chunks grow instead).
 */
export function alignedChunks(plan: Pick<JitPlan, 'boundaries' | 'durationSeconds' | 'midGop'>, chunkSeconds: number, thresholdSeconds: number): AlignedChunk[] {
  const b = plan.boundaries;
  const mid = new Set(plan.midGop ?? []);
  const target = Math.max(chunkSeconds, plan.durationSeconds / MAX_CHUNKS);
  const starts = [0];
  if (plan.durationSeconds > thresholdSeconds) {
    for (let i = 1; i < b.length; i++) {
      const since = b[i] - b[starts[starts.length - 1]];
      if (plan.durationSeconds - b[i] < target / 2) break;
      if (since >= target && (!mid.has(i) || since >= 2 * target)) starts.push(i);
    }
  }
  return starts.map((first, index) => {
    const last = index + 1 < starts.length ? starts[index + 1] - 1 : b.length - 1;
    return { index, first, last, boundaries: b.slice(first, last + 1), end: last + 1 < b.length ? b[last + 1] : plan.durationSeconds };
  });
}

/**
 * The picture of one rung from the decoded source: the one place its video filter is built, with
 * the video's mark (SPEC §24) when it has one. `input`/`output`: pad labels inside a -filter_complex.
 */
export function onRequestFilter(e: Pick<JitEncode, 'width' | 'height'>, mark?: Mark | null, pads: { input?: string; output?: string; tag?: string } = {}): string {
  return markedFilter({ chain: `scale=${e.width}:${e.height}`, frame: e, mark, ...pads });
}

/**
 * x264 options of one rung, identical for the on-request encode and the ladder's, so the two make
 * interchangeable segments (same profile, level, rate control and SPS): keyframes only at
 * `keyframeTimes` (the segments' starts, in the output's timestamps).
 */
export function onRequestVideoArgs(e: JitEncode, keyframeTimes: readonly number[]): string[] {
  const rc: RateControl = e.crf === null ? { mode: 'abr' } : { mode: 'crf', crf: e.crf };
  return [
    '-c:v', 'libx264', '-preset', e.preset, '-profile:v', 'high', '-level:v', levelString(h264Level(e, e.fps)), '-pix_fmt', 'yuv420p',
    ...videoRateArgs(e, rc),
    '-g', NO_NATURAL_KEYFRAMES, '-sc_threshold', '0',
    '-force_key_frames', keyframeTimes.map(ts).join(','),
  ];
}

type Timeline = Pick<JitPlan, 'offset' | 'start'>;

/** Source timestamps (`-copyts`, the original's start included) shifted by the plan's offset. */
function timing(plan: Timeline): string[] {
  return ['-copyts', '-avoid_negative_ts', 'disabled', '-output_ts_offset', ts(plan.offset)];
}

/**
 * Segments `first`…`last` split where each starts: keyframes forced at the boundaries (as the
 * decoder sees them: from the original's start), split at them (as the muxer sees them: after
 * the offset), named `seg_<index>.ts` as in the playlist.
 */
function segmentOutput(plan: Timeline, starts: readonly number[], first: number, dir: string): { keyframes: number[]; args: string[] } {
  const origin = plan.start ?? 0;
  const cuts = starts.slice(1).map((b) => ts(origin + b + plan.offset - EPS));
  return {
    keyframes: starts.map((b) => origin + b),
    args: [
      ...timing(plan),
      // The segment muxer's own MPEG-TS muxer would otherwise shift a run starting at 0 by x264's
      // B-frame lead (its DTS start below 0), and only that run: the timelines would disagree.
      '-f', 'segment', '-segment_format', 'mpegts', '-segment_format_options', 'avoid_negative_ts=disabled',
      ...(cuts.length ? ['-segment_times', cuts.join(',')] : ['-segment_time', '100000']),
      '-segment_start_number', String(first),
      joinPath(dir, 'seg_%05d.ts'),
    ],
  };
}

/**
 * THE on-request encode: segments `first`…`last` of an encoded plan's rung from one decode of
 * their range (SPEC §23). Every on-request segment is made by this function's arguments.
 */
export function onRequestEncodeArgs(o: { plan: JitPlan & { encode: JitEncode }; first: number; last: number; input: string; inputArgs?: readonly string[]; outputDir: string; mark?: Mark | null }): string[] {
  const { plan, first, last } = o;
  const b = plan.boundaries;
  const start = b[first];
  const end = last + 1 < b.length ? b[last + 1] : plan.durationSeconds;
  const out = segmentOutput(plan, b.slice(first, last + 1), first, o.outputDir);
  return [
    ...GLOBAL_ARGS,
    // Decoded, so the seek and the length are exact (frames before the start are decoded and dropped).
    '-ss', ts(Math.max(0, start)), '-t', ts(end - start),
    ...(o.inputArgs ?? []),
    '-i', o.input,
    '-map', '0:v:0', '-an', '-sn', '-dn',
    '-vf', onRequestFilter(plan.encode, o.mark),
    ...onRequestVideoArgs(plan.encode, out.keyframes),
    ...out.args,
  ];
}

/** The output file of segment `index`. */
export const onRequestOutput = (index: number): string => jitSegmentName(index);

/**
 * The ladder's encode of one aligned chunk into every rung at once (one decode, split, each rung
 * through onRequestFilter and onRequestVideoArgs): `<outputRoot>/<rung>/seg_<index>.ts` for the
 * chunk's segments, the same names, boundaries and timestamps as the on-request segments.
 */
export function alignedLadderArgs(o: {
  plan: Timeline & Pick<JitPlan, 'durationSeconds'>;
  rungs: ReadonlyArray<JitEncode & { name: string }>;
  chunk: AlignedChunk;
  input: string;
  inputArgs?: readonly string[];
  outputRoot: string;
  mark?: Mark | null;
}): string[] {
  const { chunk, rungs } = o;
  if (rungs.length === 0) throw new RangeError('alignedLadderArgs needs at least one rung');
  const start = chunk.boundaries[0];
  const filter =
    rungs.length === 1
      ? onRequestFilter(rungs[0], o.mark, { input: '[0:v:0]', output: '[o0]', tag: 'wm0' })
      : [`[0:v:0]split=${rungs.length}${rungs.map((_, i) => `[v${i}]`).join('')}`, ...rungs.map((r, i) => onRequestFilter(r, o.mark, { input: `[v${i}]`, output: `[o${i}]`, tag: `wm${i}` }))].join(';');
  const outputs = rungs.flatMap((r, i) => {
    const out = segmentOutput(o.plan, chunk.boundaries, chunk.first, joinPath(o.outputRoot, r.name));
    return ['-map', `[o${i}]`, '-an', '-sn', '-dn', ...onRequestVideoArgs(r, out.keyframes), ...out.args];
  });
  return [...GLOBAL_ARGS, '-ss', ts(Math.max(0, start)), '-t', ts(chunk.end - start), ...(o.inputArgs ?? []), '-i', o.input, '-filter_complex', filter, ...outputs];
}
