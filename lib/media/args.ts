// Pure ffmpeg argument builders: exact arrays, no I/O, no Node built-ins.
import type { Rung } from './ladder';
import { markedFilter, type Mark } from './watermark';

export const DEFAULT_SEGMENT_SECONDS = 6;
export const DEFAULT_PRESET = 'veryfast';
export const AUDIO_SAMPLE_RATE = '48000';
export const AUDIO_CHANNELS = '2';

/**
 * How a rung spends bits (SPEC §21, docs/transcoding.md):
 * - `crf` (the default): capped CRF. The encoder targets a constant quality (`-crf`, lower on
 *   small rungs: crfOffset) and the rung's bitrate is only a ceiling (`-maxrate`, `-bufsize` its VBV buffer),
 *   so easy content (slides, screen recordings, still shots) takes far fewer bytes while hard
 *   content stays at the cap.
 * - `abr`: the fixed-bitrate ladder of before (target `-b:v`, peak `-maxrate`), kept for the
 *   quality bench and as `TRANSCODE_RATE_CONTROL=abr`.
 * Every chunk of a rung gets the same arguments, so joins between chunks show no quality step.
 */
export type RateControl = { mode: 'crf'; crf: number } | { mode: 'abr' };
/** x264's CRF of the large rungs: its default 23 keeps slides near-transparent (SSIM ≥ 20 dB) at a fraction of the cap. */
export const DEFAULT_CRF = 23;
export const DEFAULT_RATE_CONTROL: RateControl = Object.freeze({ mode: 'crf', crf: DEFAULT_CRF });

/**
 * How much lower than the base CRF a rung of this size (its short side) is encoded. Downscaling averages noise
 * and grain away, so at one CRF the small rungs of hard content stop far below their cap and
 * lose SSIM against the fixed ladder (film grain at 240p: 0.12× the bytes, −0.58 dB); a lower
 * CRF there costs little, since small rungs are a small share of a ladder's bytes.
 */
export function crfOffset(rung: Pick<Rung, 'width' | 'height'>): number {
  const shortSide = Math.min(rung.width, rung.height);
  if (shortSide <= 240) return 5;
  if (shortSide <= 360) return 3;
  if (shortSide <= 480) return 2;
  return 0;
}

/** The video rate-control options of one rung; `stream` suffixes them (`-crf:v:2`) for multi-output commands. */
export function videoRateArgs(rung: Pick<Rung, 'width' | 'height' | 'videoBitrate' | 'maxrate' | 'bufsize'>, rc: RateControl = DEFAULT_RATE_CONTROL, stream = ''): string[] {
  if (rc.mode === 'abr') {
    return [`-b${stream || ':v'}`, String(rung.videoBitrate), `-maxrate${stream}`, String(rung.maxrate), `-bufsize${stream}`, String(rung.bufsize)];
  }
  // The rung's average bitrate as the peak, the fixed ladder's VBV buffer with x264's default
  // initial fill: on hard content (high motion, grain) the encode reaches the cap and matches the
  // fixed ladder's bytes and SSIM (bench/quality.ts). The buffer a third full left it 0.4 dB below
  // at 0.88x the bytes; the fixed ladder's peak (7% higher) put grain at 1.10x the bytes.
  return [
    `-crf${stream}`, String(Math.max(0, rc.crf - crfOffset(rung))),
    `-maxrate${stream}`, String(rung.videoBitrate),
    `-bufsize${stream}`, String(rung.bufsize),
  ];
}

/** Global options shared by every invocation; run.ts parses the `-progress pipe:1` output. */
export const GLOBAL_ARGS = ['-progress', 'pipe:1', '-nostats', '-y', '-hide_banner', '-loglevel', 'error'];

export function joinPath(dir: string, name: string): string {
  if (dir === '') return name;
  return `${dir.replace(/\/+$/, '')}/${name}`;
}

/** Formats seconds for ffmpeg without float noise (0.30000000000000004 -> "0.3"). */
export function seconds(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}

// [level_idc, MaxMBPS, MaxFS, MaxBR (kbit/s, Baseline/Main), MaxCPB (kbit, Baseline/Main)] from H.264 Table A-1.
const H264_LEVELS: ReadonlyArray<readonly [number, number, number, number, number]> = [
  [10, 1485, 99, 64, 175],
  [11, 3000, 396, 192, 500],
  [12, 6000, 396, 384, 1000],
  [13, 11880, 396, 768, 2000],
  [20, 11880, 396, 2000, 2000],
  [21, 19800, 792, 4000, 4000],
  [22, 20250, 1620, 4000, 4000],
  [30, 40500, 1620, 10000, 10000],
  [31, 108000, 3600, 14000, 14000],
  [32, 216000, 5120, 20000, 20000],
  [40, 245760, 8192, 20000, 25000],
  [41, 245760, 8192, 50000, 62500],
  [42, 522240, 8704, 50000, 62500],
  [50, 589824, 22080, 135000, 135000],
  [51, 983040, 36864, 240000, 240000],
  [52, 2073600, 36864, 240000, 240000],
  [60, 4177920, 139264, 240000, 240000],
  [61, 8355840, 139264, 480000, 480000],
  [62, 16711680, 139264, 800000, 800000],
];
const HIGH_PROFILE_BITRATE_FACTOR = 1.25;
const ASSUMED_FPS = 30;

/**
 * Smallest H.264 level_idc (e.g. 31 for 3.1) that fits the rung's frame size, macroblock rate
 * and VBV settings with the High profile. Unknown fps is assumed to be 30.
 */
export function h264Level(rung: Pick<Rung, 'width' | 'height' | 'maxrate' | 'bufsize'>, fps?: number | null): number {
  const mbW = Math.ceil(rung.width / 16);
  const mbH = Math.ceil(rung.height / 16);
  const frameMbs = mbW * mbH;
  const rate = fps && fps > 0 ? fps : ASSUMED_FPS;
  for (const [idc, maxMbps, maxFs, maxBr, maxCpb] of H264_LEVELS) {
    const maxSide = Math.sqrt(maxFs * 8);
    if (
      frameMbs <= maxFs &&
      mbW <= maxSide &&
      mbH <= maxSide &&
      frameMbs * rate <= maxMbps &&
      rung.maxrate <= maxBr * 1000 * HIGH_PROFILE_BITRATE_FACTOR &&
      rung.bufsize <= maxCpb * 1000 * HIGH_PROFILE_BITRATE_FACTOR
    ) {
      return idc;
    }
  }
  return 62;
}

export const levelString = (idc: number): string => `${Math.floor(idc / 10)}.${idc % 10}`;

/** RFC 6381 CODECS value for a rung encoded by these builders (H.264 High + AAC-LC). */
export function codecsFor(
  rung: Pick<Rung, 'width' | 'height' | 'maxrate' | 'bufsize'>,
  options: { fps?: number | null; hasAudio?: boolean } = {},
): string {
  const level = h264Level(rung, options.fps).toString(16).padStart(2, '0');
  const video = `avc1.6400${level}`;
  return options.hasAudio === false ? video : `${video},mp4a.40.2`;
}

export function keyframeArgs(segmentSeconds: number, fps: number | null | undefined): string[] {
  // Keyframes at exact multiples of the segment length (and none from scene cuts) give every rung
  // identical, closed-GOP segment boundaries, which ABR switching needs.
  const args = ['-force_key_frames', `expr:gte(t,n_forced*${seconds(segmentSeconds)})`, '-sc_threshold', '0'];
  if (fps && fps > 0) {
    const gop = String(Math.max(1, Math.round(fps * segmentSeconds)));
    args.push('-g', gop, '-keyint_min', gop);
  }
  return args;
}

export function hlsArgs(segmentSeconds: number): string[] {
  return [
    '-f', 'hls',
    '-hls_time', seconds(segmentSeconds),
    '-hls_playlist_type', 'vod',
    '-hls_segment_type', 'mpegts',
    '-hls_flags', 'independent_segments',
  ];
}

export type TranscodeOptions = {
  input: string;
  /** Allow-list options for the input (SafeInput.inputArgs, from lib/media/input.ts); go right before `-i`. */
  inputArgs?: readonly string[];
  outputDir: string;
  rung: Rung;
  hasAudio: boolean;
  segmentSeconds?: number;
  fps?: number | null;
  preset?: string;
  rateControl?: RateControl;
  mark?: Mark | null;
};

/** One rung as an HLS VOD rendition: `<outputDir>/index.m3u8` + `<outputDir>/seg_%05d.ts`. */
export function transcodeArgs(options: TranscodeOptions): string[] {
  const { input, outputDir, rung, hasAudio, fps } = options;
  const segmentSeconds = options.segmentSeconds ?? DEFAULT_SEGMENT_SECONDS;
  const preset = options.preset ?? DEFAULT_PRESET;
  return [
    ...GLOBAL_ARGS,
    ...(options.inputArgs ?? []),
    '-i', input,
    '-map', '0:v:0',
    ...(hasAudio ? ['-map', '0:a:0?'] : []),
    '-vf', markedFilter({ chain: `scale=${rung.width}:${rung.height}`, frame: rung, mark: options.mark }),
    '-c:v', 'libx264',
    '-preset', preset,
    '-profile:v', 'high',
    '-level:v', levelString(h264Level(rung, fps)),
    '-pix_fmt', 'yuv420p',
    ...videoRateArgs(rung, options.rateControl),
    ...keyframeArgs(segmentSeconds, fps),
    ...(hasAudio
      ? ['-c:a', 'aac', '-b:a', String(rung.audioBitrate), '-ar', AUDIO_SAMPLE_RATE, '-ac', AUDIO_CHANNELS]
      : ['-an']),
    ...hlsArgs(segmentSeconds),
    '-hls_segment_filename', joinPath(outputDir, 'seg_%05d.ts'),
    joinPath(outputDir, 'index.m3u8'),
  ];
}

export type SinglePassLadderOptions = {
  input: string;
  inputArgs?: readonly string[];
  outputRoot: string;
  rungs: readonly Rung[];
  hasAudio: boolean;
  segmentSeconds?: number;
  fps?: number | null;
  preset?: string;
  masterName?: string;
  /** Default `abr`: this command is the benchmarks' floor, today's fixed-bitrate ladder. */
  rateControl?: RateControl;
};

/**
 * Every rung from ONE ffmpeg process (decode once, split, scale per rung): writes
 * `<outputRoot>/<rung.name>/index.m3u8` per rung and `<outputRoot>/<masterName>`.
 * Used as the benchmark floor for the per-rung pipeline.
 */
export function singlePassLadderArgs(options: SinglePassLadderOptions): string[] {
  const { input, outputRoot, rungs, hasAudio, fps } = options;
  const segmentSeconds = options.segmentSeconds ?? DEFAULT_SEGMENT_SECONDS;
  const preset = options.preset ?? DEFAULT_PRESET;
  if (rungs.length === 0) throw new RangeError('singlePassLadderArgs needs at least one rung');
  if (new Set(rungs.map((r) => r.name)).size !== rungs.length) {
    throw new RangeError('rung names must be unique (they name the output directories)');
  }

  const splitLabels = rungs.map((_, i) => `[v${i}]`).join('');
  const filter = [
    `[0:v]split=${rungs.length}${splitLabels}`,
    ...rungs.map((r, i) => `[v${i}]scale=${r.width}:${r.height}[o${i}]`),
  ].join(';');

  const maps: string[] = [];
  const perStream: string[] = [];
  rungs.forEach((r, i) => {
    maps.push('-map', `[o${i}]`);
    if (hasAudio) maps.push('-map', '0:a:0?');
    perStream.push(`-level:v:${i}`, levelString(h264Level(r, fps)), ...videoRateArgs(r, options.rateControl ?? { mode: 'abr' }, `:v:${i}`));
    if (hasAudio) perStream.push(`-b:a:${i}`, String(r.audioBitrate));
  });

  const streamMap = rungs.map((r, i) => (hasAudio ? `v:${i},a:${i},name:${r.name}` : `v:${i},name:${r.name}`)).join(' ');

  return [
    ...GLOBAL_ARGS,
    ...(options.inputArgs ?? []),
    '-i', input,
    '-filter_complex', filter,
    ...maps,
    '-c:v', 'libx264',
    '-preset', preset,
    '-profile:v', 'high',
    '-pix_fmt', 'yuv420p',
    ...perStream,
    ...keyframeArgs(segmentSeconds, fps),
    ...(hasAudio ? ['-c:a', 'aac', '-ar', AUDIO_SAMPLE_RATE, '-ac', AUDIO_CHANNELS] : ['-an']),
    ...hlsArgs(segmentSeconds),
    '-master_pl_name', options.masterName ?? 'master.m3u8',
    '-hls_segment_filename', joinPath(outputRoot, '%v/seg_%05d.ts'),
    '-var_stream_map', streamMap,
    joinPath(outputRoot, '%v/index.m3u8'),
  ];
}

/** `mark` (SPEC §24) is burnt in at the source's display size `frame`, before the downscale. */
export type ThumbnailOptions = { input: string; inputArgs?: readonly string[]; output: string; atSeconds: number; maxWidth?: number; mark?: Mark | null; frame?: { width: number; height: number } };

/** One JPEG frame at `atSeconds`, at most `maxWidth` wide (never upscaled), even height. */
export function thumbnailArgs(options: ThumbnailOptions): string[] {
  const maxWidth = options.maxWidth ?? 1280;
  return [
    ...GLOBAL_ARGS,
    // -ss before -i seeks the demuxer (fast) instead of decoding up to the timestamp.
    '-ss', seconds(Math.max(0, options.atSeconds)),
    ...(options.inputArgs ?? []),
    '-i', options.input,
    '-map', '0:v:0',
    '-frames:v', '1',
    '-vf', markedFilter({ then: `scale='min(${maxWidth},iw)':-2`, frame: options.frame ?? { width: 0, height: 0 }, mark: options.frame ? options.mark : null }),
    '-q:v', '3',
    '-update', '1',
    options.output,
  ];
}

/** Where to grab the poster frame: 10% in, capped at 10 s (0 when the duration is unknown). */
export function thumbnailTime(durationSeconds: number | null | undefined): number {
  if (durationSeconds == null || !Number.isFinite(durationSeconds) || durationSeconds <= 0) return 0;
  return Math.min(10, Math.round(durationSeconds * 100) / 1000);
}

export type PlaylistRung = Rung & { codecs?: string };

/**
 * HLS master playlist text. BANDWIDTH is the peak (maxrate + audio), AVERAGE-BANDWIDTH the
 * target (video + audio); variants are listed lowest bandwidth first.
 */
export function masterPlaylist(
  rungs: readonly PlaylistRung[],
  uriFor: (rung: PlaylistRung) => string,
  options: { hasAudio?: boolean; fps?: number | null; /** This variant's name is listed first: the one players start with (Apple's HLS authoring rule, hls.js). */ first?: string } = {},
): string {
  const hasAudio = options.hasAudio ?? true;
  const variants = rungs.map((r) => {
    const audio = hasAudio ? r.audioBitrate : 0;
    return { rung: r, peak: r.maxrate + audio, average: r.videoBitrate + audio };
  });
  variants.sort((a, b) => a.peak - b.peak || a.rung.width * a.rung.height - b.rung.width * b.rung.height);
  const lead = variants.findIndex((v) => v.rung.name === options.first);
  if (lead > 0) variants.unshift(...variants.splice(lead, 1));

  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-INDEPENDENT-SEGMENTS'];
  for (const { rung, peak, average } of variants) {
    const codecs = rung.codecs ?? codecsFor(rung, { fps: options.fps, hasAudio });
    const attrs = [
      `BANDWIDTH=${peak}`,
      `AVERAGE-BANDWIDTH=${average}`,
      `RESOLUTION=${rung.width}x${rung.height}`,
      `CODECS="${codecs}"`,
    ];
    if (options.fps && options.fps > 0) attrs.push(`FRAME-RATE=${options.fps.toFixed(3)}`);
    lines.push(`#EXT-X-STREAM-INF:${attrs.join(',')}`, uriFor(rung));
  }
  return `${lines.join('\n')}\n`;
}
