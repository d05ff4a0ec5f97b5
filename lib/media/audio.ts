// Pure: audio renditions (SPEC §19, docs/audio.md). Exact ffmpeg arrays, names of the tracks a
// source's audio streams become, loudness measures, and the audio-only ladder. No I/O and no
// Node built-ins: workflow code imports this file.
import { AUDIO_SAMPLE_RATE, GLOBAL_ARGS, hlsArgs, joinPath } from './args';

/** One audio stream of the source, as ffprobe describes it (`index` counts audio streams only: `0:a:<index>`). */
export type AudioStream = { index: number; codec: string | null; channels: number | null; language: string | null; title: string | null };

/** One audio rendition to publish: a source stream in stereo, or kept in 5.1. */
export type AudioTrackPlan = {
  /** Folder under `hls/audio/` and the key of the row; `a0`, `a0-51`, `a1`, …; added tracks `x-<lang>`. */
  rendition: string;
  stream: number;
  language: string;
  name: string;
  channels: 2 | 6;
  bitrate: number;
  isDefault: boolean;
};

export const STEREO_BITRATE = 128_000;
export const SURROUND_BITRATE = 384_000;
/** Audio-only ladder (SPEC §19): two AAC renditions. */
export const AUDIO_ONLY_LADDER: ReadonlyArray<{ name: string; bitrate: number }> = Object.freeze([
  { name: 'audio-64k', bitrate: 64_000 },
  { name: 'audio-128k', bitrate: 128_000 },
]);
/** EBU R128 target for `normalize_audio: true` (SPEC §19), with the true-peak and range loudnorm keeps. */
export const TARGET_LUFS = -16;
const TARGET_TP = -1.5;
const TARGET_LRA = 11;

// ISO 639-2 (what MP4 and Matroska store) → the shortest BCP-47 tag, for the languages people tag most.
const ISO639_2: Record<string, string> = {
  eng: 'en', fre: 'fr', fra: 'fr', ger: 'de', deu: 'de', spa: 'es', ita: 'it', por: 'pt', dut: 'nl', nld: 'nl',
  rus: 'ru', pol: 'pl', ukr: 'uk', cze: 'cs', ces: 'cs', swe: 'sv', nor: 'no', dan: 'da', fin: 'fi', gre: 'el',
  ell: 'el', tur: 'tr', ara: 'ar', heb: 'he', hin: 'hi', jpn: 'ja', kor: 'ko', chi: 'zh', zho: 'zh', vie: 'vi',
  tha: 'th', ind: 'id', may: 'ms', msa: 'ms', hun: 'hu', rum: 'ro', ron: 'ro', bul: 'bg', cat: 'ca', per: 'fa', fas: 'fa',
};

/** A stream's language tag as BCP-47 (`eng` → `en`), `und` when absent or not a language. */
export function streamLanguage(tag: string | null | undefined): string {
  const t = (tag ?? '').trim().toLowerCase();
  if (!/^[a-z]{2,3}(-[a-z0-9]{2,8})*$/.test(t) || t === 'und' || t === 'mul' || t === 'zxx') return 'und';
  const [base, ...rest] = t.split('-');
  return [ISO639_2[base] ?? base, ...rest].join('-');
}

/** HLS attribute values are quoted strings: no quotes or line breaks inside (RFC 8216 §4.2). */
export const attrText = (s: string): string => s.replace(/["\r\n]/g, "'").trim().slice(0, 100);

/**
 * The renditions a source's audio streams become, in stream order, the first the default.
 * Every stream gets a stereo AAC rendition (a surround stream is downmixed); a stream of more
 * than two channels also keeps a 5.1 rendition (CHANNELS="6"). `nameOf` names a language
 * (the activity passes Intl.DisplayNames; pure code cannot rely on Intl data).
 */
export function planAudioTracks(streams: readonly AudioStream[], nameOf: (language: string) => string = (l) => l): AudioTrackPlan[] {
  const out: AudioTrackPlan[] = [];
  streams.forEach((s, i) => {
    const language = streamLanguage(s.language);
    const base = s.title?.trim() ? attrText(s.title) : language === 'und' ? `Audio ${i + 1}` : nameOf(language);
    out.push({ rendition: `a${s.index}`, stream: s.index, language, name: base, channels: 2, bitrate: STEREO_BITRATE, isDefault: i === 0 });
    if ((s.channels ?? 2) > 2) {
      out.push({ rendition: `a${s.index}-51`, stream: s.index, language, name: `${base} (5.1)`, channels: 6, bitrate: SURROUND_BITRATE, isDefault: false });
    }
  });
  return out;
}

export type LoudnessMeasure = { inputI: number; inputTp: number; inputLra: number; inputThresh: number; targetOffset: number };

/** Pass 1 of loudnorm (EBU R128): reads one audio stream, writes nothing, reports its measures on stderr. */
export function loudnessArgs(o: { input: string; inputArgs?: readonly string[]; stream: number }): string[] {
  return [
    // Info level: the JSON report is logged there (GLOBAL_ARGS keep ffmpeg to errors).
    '-progress', 'pipe:1', '-nostats', '-y', '-hide_banner', '-loglevel', 'info',
    ...(o.inputArgs ?? []),
    '-i', o.input,
    '-map', `0:a:${o.stream}`, '-vn', '-sn', '-dn',
    '-af', `loudnorm=I=${TARGET_LUFS}:TP=${TARGET_TP}:LRA=${TARGET_LRA}:print_format=json`,
    '-f', 'null', '-',
  ];
}

/** The measures of loudnormArgs' stderr; null when there is none, or the audio is silent (-inf). */
export function parseLoudness(stderr: string): LoudnessMeasure | null {
  const start = stderr.lastIndexOf('"input_i"');
  if (start < 0) return null;
  const open = stderr.lastIndexOf('{', start);
  const close = stderr.indexOf('}', start);
  if (open < 0 || close < 0) return null;
  let json: Record<string, string>;
  try {
    json = JSON.parse(stderr.slice(open, close + 1)) as Record<string, string>;
  } catch {
    return null;
  }
  const n = (k: string) => Number(json[k]);
  const m = { inputI: n('input_i'), inputTp: n('input_tp'), inputLra: n('input_lra'), inputThresh: n('input_thresh'), targetOffset: n('target_offset') };
  return Object.values(m).every(Number.isFinite) ? m : null;
}

/**
 * Pass 2: loudnorm told what pass 1 measured, in linear mode (one gain for the whole track, so
 * dynamics are kept) whenever the true-peak limit allows; loudnorm falls back to its dynamic
 * mode otherwise. Either lands within ±1 LU of the target.
 */
export function loudnormFilter(m: LoudnessMeasure): string {
  const f = (x: number) => x.toFixed(2);
  return `loudnorm=I=${TARGET_LUFS}:TP=${TARGET_TP}:LRA=${TARGET_LRA}:measured_I=${f(m.inputI)}:measured_TP=${f(m.inputTp)}:measured_LRA=${f(m.inputLra)}:measured_thresh=${f(m.inputThresh)}:offset=${f(m.targetOffset)}:linear=true`;
}

/**
 * One audio stream as an HLS rendition of MPEG-TS audio segments: `<outputDir>/index.m3u8` and
 * `seg_%05d.ts`. `-copyts` keeps the source's timestamps, as the video chunks do, so audio and
 * video stay in sync across the separate processes that make them.
 */
export function audioRenditionArgs(o: {
  input: string;
  inputArgs?: readonly string[];
  outputDir: string;
  stream: number;
  channels: number;
  bitrate: number;
  segmentSeconds: number;
  loudnorm?: LoudnessMeasure | null;
}): string[] {
  const filters = [o.loudnorm ? loudnormFilter(o.loudnorm) : null, o.channels === 6 ? 'aformat=channel_layouts=5.1' : null].filter(Boolean);
  return [
    ...GLOBAL_ARGS,
    '-copyts',
    ...(o.inputArgs ?? []),
    '-i', o.input,
    '-map', `0:a:${o.stream}`, '-vn', '-sn', '-dn',
    ...(filters.length ? ['-af', filters.join(',')] : []),
    '-c:a', 'aac', '-b:a', String(o.bitrate), '-ar', AUDIO_SAMPLE_RATE, '-ac', String(o.channels),
    ...hlsArgs(o.segmentSeconds),
    '-hls_segment_filename', joinPath(o.outputDir, 'seg_%05d.ts'),
    joinPath(o.outputDir, 'index.m3u8'),
  ];
}

/**
 * An added track (POST …/audio-tracks) on the video's timeline: padded with silence to the
 * video's duration (`apad`) and cut at it (`-t`), starting at 0 like the video.
 */
export function alignedTrackArgs(o: {
  input: string;
  inputArgs?: readonly string[];
  outputDir: string;
  durationSeconds: number;
  bitrate: number;
  segmentSeconds: number;
  loudnorm?: LoudnessMeasure | null;
}): string[] {
  const filters = [o.loudnorm ? loudnormFilter(o.loudnorm) : null, 'apad'].filter(Boolean);
  return [
    ...GLOBAL_ARGS,
    ...(o.inputArgs ?? []),
    '-i', o.input,
    '-map', '0:a:0', '-vn', '-sn', '-dn',
    '-af', filters.join(','),
    '-t', String(Math.round(o.durationSeconds * 1000) / 1000),
    '-c:a', 'aac', '-b:a', String(o.bitrate), '-ar', AUDIO_SAMPLE_RATE, '-ac', '2',
    ...hlsArgs(o.segmentSeconds),
    '-hls_segment_filename', joinPath(o.outputDir, 'seg_%05d.ts'),
    joinPath(o.outputDir, 'index.m3u8'),
  ];
}

/** The audio-only ladder from one decode: `<outputRoot>/<name>/index.m3u8` for each rung. */
export function audioLadderArgs(o: { input: string; inputArgs?: readonly string[]; outputRoot: string; segmentSeconds: number; loudnorm?: LoudnessMeasure | null }): string[] {
  const outputs = AUDIO_ONLY_LADDER.flatMap((r) => [
    '-map', '0:a:0', '-vn', '-sn', '-dn',
    ...(o.loudnorm ? ['-af', loudnormFilter(o.loudnorm)] : []),
    '-c:a', 'aac', '-b:a', String(r.bitrate), '-ar', AUDIO_SAMPLE_RATE, '-ac', '2',
    ...hlsArgs(o.segmentSeconds),
    '-hls_segment_filename', joinPath(joinPath(o.outputRoot, r.name), 'seg_%05d.ts'),
    joinPath(joinPath(o.outputRoot, r.name), 'index.m3u8'),
  ]);
  return [...GLOBAL_ARGS, ...(o.inputArgs ?? []), '-i', o.input, ...outputs];
}

/** The poster of an audio-only video: its waveform (showwavespic) on a dark band, as a JPEG. */
export function waveformArgs(o: { input: string; inputArgs?: readonly string[]; output: string; width?: number; height?: number }): string[] {
  const size = `${o.width ?? 1280}x${o.height ?? 360}`;
  return [
    ...GLOBAL_ARGS,
    ...(o.inputArgs ?? []),
    '-i', o.input,
    '-filter_complex',
    `[0:a:0]aformat=channel_layouts=mono,showwavespic=s=${size}:colors=0x60a5fa[w];color=c=0x0f172a:s=${size}[bg];[bg][w]overlay=format=auto:shortest=1,format=yuvj420p[o]`,
    '-map', '[o]',
    '-frames:v', '1',
    '-q:v', '3',
    '-update', '1',
    o.output,
  ];
}

/** Master playlist of an audio-only video: one variant per AAC rung, lowest first. */
export function audioOnlyMaster(rungs: ReadonlyArray<{ name: string; bitrate: number }>): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-INDEPENDENT-SEGMENTS'];
  for (const r of [...rungs].sort((a, b) => a.bitrate - b.bitrate)) {
    // The ADTS/TS overhead is a few percent over the AAC target.
    const peak = Math.round(r.bitrate * 1.1);
    lines.push(`#EXT-X-STREAM-INF:BANDWIDTH=${peak},AVERAGE-BANDWIDTH=${r.bitrate},CODECS="mp4a.40.2"`, `${r.name}/index.m3u8`);
  }
  return `${lines.join('\n')}\n`;
}

/** An audio file's attached picture (cover art) as a JPEG poster. No seek: a seek skips the one-frame stream. */
export function coverArtArgs(o: { input: string; inputArgs?: readonly string[]; output: string; maxWidth?: number }): string[] {
  const maxWidth = o.maxWidth ?? 1280;
  return [
    ...GLOBAL_ARGS,
    ...(o.inputArgs ?? []),
    '-i', o.input,
    '-map', '0:v:0',
    '-frames:v', '1',
    '-vf', `scale='min(${maxWidth},iw)':-2`,
    '-q:v', '3',
    '-update', '1',
    o.output,
  ];
}
