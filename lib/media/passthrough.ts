// Pure: when the source itself can be published as an HLS rendition without re-encoding
// (docs/transcoding.md), and the ffmpeg arguments that remux it. No I/O, no Node built-ins.
import { GLOBAL_ARGS, hlsArgs, joinPath } from './args';
import { LADDER } from './ladder';

/** What the eligibility rules look at; `probe` and the keyframe scan provide it. */
export type SourceFacts = {
  durationSeconds: number | null;
  width: number;
  height: number;
  rotation: number;
  fps: number | null;
  video: { codec: string | null; profile: string | null; pixFmt: string | null; level: number | null; bitrate: number | null };
  audio: { codec: string | null; profile: string | null; channels: number | null; sampleRate: number | null } | null;
  /** Keyframe times in seconds, ascending (from the keyframe scan). */
  keyframes: readonly number[];
};

export type Eligibility = { eligible: true; codecs: string } | { eligible: false; reason: string };

// RFC 6381 avc1.PPCCLL: profile_idc and constraint flags of the profiles HLS players all decode.
const H264_PROFILES: Record<string, string> = {
  'Constrained Baseline': '42E0',
  Baseline: '4200',
  Main: '4D40',
  High: '6400',
};
const PIX_FMTS = new Set(['yuv420p', 'yuvj420p']);
const SAMPLE_RATES = new Set([44_100, 48_000]);
/** Level 5.1 (2160p30): beyond it phones and TVs refuse the stream. */
const MAX_LEVEL = 51;
const MAX_FPS = 60;
/** Keyframes further apart than this many segment lengths make segments too long to start fast. */
export const MAX_KEYFRAME_SPACING_SEGMENTS = 2;
/** A source above this many times the ladder's bitrate for its height would stall most viewers. */
export const MAX_BITRATE_FACTOR = 2.5;

/** The ladder bitrate for a short side: the largest rung that fits, else the lowest. */
export function ladderBitrateFor(shortSide: number): number {
  const fitting = LADDER.filter((r) => r.height <= shortSide);
  return (fitting.length ? fitting[fitting.length - 1] : LADDER[0]).videoBitrate;
}

/** Longest gap between keyframes, counting the gap from the last keyframe to the end. */
export function maxKeyframeGap(keyframes: readonly number[], durationSeconds: number): number {
  if (keyframes.length === 0) return durationSeconds;
  let gap = keyframes[0];
  for (let i = 1; i < keyframes.length; i++) gap = Math.max(gap, keyframes[i] - keyframes[i - 1]);
  return Math.max(gap, durationSeconds - keyframes[keyframes.length - 1]);
}

/**
 * Whether the source can be remuxed into HLS as-is: H.264 in a profile every player decodes,
 * 4:2:0, no rotation (HLS carries no display matrix), keyframes at most
 * MAX_KEYFRAME_SPACING_SEGMENTS segments apart, a bitrate sane for its height, and either no
 * audio or stereo/mono AAC-LC at 44.1/48 kHz. The first rule that fails is the reason.
 */
export function passthroughEligibility(s: SourceFacts, segmentSeconds: number): Eligibility {
  const no = (reason: string): Eligibility => ({ eligible: false, reason });
  const v = s.video;
  if (v.codec !== 'h264') return no(`video codec ${v.codec ?? 'unknown'} is not H.264`);
  const profile = v.profile ? H264_PROFILES[v.profile] : undefined;
  if (!profile) return no(`H.264 profile ${v.profile ?? 'unknown'} is not Baseline, Main or High`);
  if (!v.pixFmt || !PIX_FMTS.has(v.pixFmt)) return no(`pixel format ${v.pixFmt ?? 'unknown'} is not 4:2:0 8-bit`);
  if (v.level === null || v.level <= 0 || v.level > MAX_LEVEL) return no(`H.264 level ${v.level ?? 'unknown'} is above 5.1`);
  if (s.rotation !== 0) return no(`the picture is rotated ${s.rotation}°`);
  if (s.fps === null || s.fps > MAX_FPS) return no(`frame rate ${s.fps ?? 'unknown'} is not at most ${MAX_FPS}`);
  if (s.durationSeconds === null) return no('the duration is unknown');
  if (s.keyframes.length === 0 || s.keyframes[0] > 0.5) return no('the first frame is not a keyframe');
  const gap = maxKeyframeGap(s.keyframes, s.durationSeconds);
  if (gap > MAX_KEYFRAME_SPACING_SEGMENTS * segmentSeconds) return no(`keyframes are up to ${round(gap)} s apart`);
  const cap = MAX_BITRATE_FACTOR * ladderBitrateFor(Math.min(s.width, s.height));
  if (v.bitrate === null) return no('the video bitrate is unknown');
  if (v.bitrate > cap) return no(`video bitrate ${v.bitrate} b/s is above ${cap} b/s for its height`);
  const level = v.level.toString(16).padStart(2, '0').toUpperCase();
  const video = `avc1.${profile}${level}`;
  const a = s.audio;
  if (a === null) return { eligible: true, codecs: video };
  if (a.codec !== 'aac' || a.profile !== 'LC') return no(`audio ${[a.codec ?? 'unknown', a.profile].filter(Boolean).join(' ')} is not AAC-LC`);
  if (a.channels === null || a.channels < 1 || a.channels > 2) return no(`audio has ${a.channels ?? 'unknown'} channels`);
  if (a.sampleRate === null || !SAMPLE_RATES.has(a.sampleRate)) return no(`audio sample rate ${a.sampleRate ?? 'unknown'} Hz is not 44.1 or 48 kHz`);
  return { eligible: true, codecs: `${video},mp4a.40.2` };
}

const round = (n: number): number => Math.round(n * 1000) / 1000;

/** The source's first video and audio streams copied into HLS segments (cut at its keyframes). */
export function remuxArgs(o: { input: string; inputArgs?: readonly string[]; outputDir: string; hasAudio: boolean; segmentSeconds: number }): string[] {
  return [
    ...GLOBAL_ARGS,
    ...(o.inputArgs ?? []),
    '-i', o.input,
    '-map', '0:v:0',
    ...(o.hasAudio ? ['-map', '0:a:0'] : []),
    '-c', 'copy',
    ...hlsArgs(o.segmentSeconds),
    '-hls_segment_filename', joinPath(o.outputDir, 'seg_%05d.ts'),
    joinPath(o.outputDir, 'index.m3u8'),
  ];
}

/** ffprobe arguments that list the first video stream's packets as `pts_time,flags` lines. */
export function keyframeScanArgs(input: string, inputArgs: readonly string[] = []): string[] {
  return ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', ...inputArgs, '-i', input];
}

/** Keyframe times (ascending, deduplicated) from keyframeScanArgs' output. */
export function parseKeyframes(csv: string): number[] {
  const times = new Set<number>();
  for (const line of csv.split('\n')) {
    const [t, flags] = line.trim().split(',');
    if (!flags?.includes('K')) continue;
    const n = Number(t);
    if (t !== '' && Number.isFinite(n)) times.add(n);
  }
  return [...times].sort((a, b) => a - b);
}

/** Peak and average bitrate (bits/s) of an HLS playlist's segments, from their sizes. */
export function measuredBandwidth(segments: ReadonlyArray<{ seconds: number; bytes: number }>): { peak: number; average: number } {
  let bytes = 0;
  let seconds = 0;
  let peak = 0;
  for (const s of segments) {
    bytes += s.bytes;
    seconds += s.seconds;
    if (s.seconds > 0) peak = Math.max(peak, (s.bytes * 8) / s.seconds);
  }
  return { peak: Math.ceil(peak), average: seconds > 0 ? Math.ceil((bytes * 8) / seconds) : 0 };
}


