// Pure ffmpeg argument builders for the SPEC §14 outputs: exact arrays, no I/O, no Node built-ins.
// Inputs are always one self-contained file (a concatenation of a rendition's MPEG-TS segments,
// or the original), opened with the allow-list options of lib/media/input.ts (`inputArgs`, from
// MediaTools.open) and run through MediaTools.ffmpeg: every §12 rule holds for these jobs too.

const GLOBAL_ARGS = ['-progress', 'pipe:1', '-nostats', '-y', '-hide_banner', '-loglevel', 'error'];

/** Formats seconds for ffmpeg without float noise. */
const secs = (value: number): string => String(Math.round(value * 1000) / 1000);

export type FitMode = 'preserve' | 'crop' | 'pad';
export type StillFormat = 'jpg' | 'png' | 'webp';

/** The scaling filter for a requested box. Without both sides, `preserve` is the only meaning. */
export function fitFilter(width: number | undefined, height: number | undefined, fit: FitMode): string {
  if (width && height) {
    if (fit === 'crop') return `scale=${width}:${height}:force_original_aspect_ratio=increase,crop=${width}:${height}`;
    if (fit === 'pad') return `scale=${width}:${height}:force_original_aspect_ratio=decrease,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2:color=black`;
    return `scale=${width}:${height}:force_original_aspect_ratio=decrease`;
  }
  if (width) return `scale=${width}:-1`;
  if (height) return `scale=-1:${height}`;
  return 'scale=iw:ih';
}

const STILL_CODEC: Record<StillFormat, string[]> = {
  jpg: ['-c:v', 'mjpeg', '-q:v', '3'],
  png: ['-c:v', 'png'],
  webp: ['-c:v', 'libwebp', '-quality', '80'],
};

/** One frame `offset` seconds into `input`, scaled to the box, square pixels. */
export function stillArgs(o: { input: string; inputArgs?: readonly string[]; output: string; offset: number; width?: number; height?: number; fit: FitMode; format: StillFormat }): string[] {
  // Output-side -ss (decode up to the time): inputs are one to three segments, and an
  // input-side seek into an MPEG-TS GOP can yield no frame at all.
  return [
    ...GLOBAL_ARGS,
    ...(o.inputArgs ?? []), '-i', o.input,
    '-ss', secs(Math.max(0, o.offset)),
    '-map', '0:v:0',
    '-frames:v', '1',
    '-vf', `${fitFilter(o.width, o.height, o.fit)},setsar=1`,
    ...STILL_CODEC[o.format],
    '-f', 'image2',
    '-update', '1',
    o.output,
  ];
}

/** Frames an animated image of this span gets (ffmpeg is told exactly this many). */
export const animatedFrames = (durationSeconds: number, fps: number): number => Math.max(1, Math.round(durationSeconds * fps));

/** An animated GIF (own palette, for colour) or WebP of `duration` seconds from `offset`, looping. */
export function animatedArgs(o: { input: string; inputArgs?: readonly string[]; output: string; offset: number; duration: number; width: number; fps: number; format: 'gif' | 'webp' }): string[] {
  const base = `fps=${o.fps},scale=${o.width}:-2:flags=lanczos,setsar=1`;
  const codec =
    o.format === 'gif'
      ? ['-filter_complex', `[0:v:0]${base},split[a][b];[a]palettegen=stats_mode=diff[p];[b][p]paletteuse=dither=bayer`, '-c:v', 'gif', '-f', 'gif']
      : ['-vf', base, '-c:v', 'libwebp_anim', '-quality', '70', '-f', 'webp'];
  // Output-side -ss: the input is a few seconds of segments, and an input-side seek into an
  // open GOP of MPEG-TS hands palettegen no frame at all (ffmpeg 5.1 then writes an empty file).
  return [
    ...GLOBAL_ARGS,
    ...(o.inputArgs ?? []), '-i', o.input,
    '-ss', secs(Math.max(0, o.offset)),
    '-t', secs(o.duration),
    '-an',
    ...codec,
    '-frames:v', String(animatedFrames(o.duration, o.fps)),
    '-loop', '0',
    o.output,
  ];
}

/**
 * A rendition's joined MPEG-TS segments remuxed into an MP4 without re-encoding: the H.264 and
 * AAC are already what an MP4 download needs. ADTS→ASC for the AAC; faststart puts the moov
 * first so a browser can start playing the download at once.
 */
export function remuxMp4Args(o: { input: string; inputArgs?: readonly string[]; output: string; hasAudio: boolean }): string[] {
  return [
    ...GLOBAL_ARGS,
    ...(o.inputArgs ?? []), '-i', o.input,
    '-map', '0:v:0',
    ...(o.hasAudio ? ['-map', '0:a:0', '-bsf:a', 'aac_adtstoasc'] : []),
    '-c', 'copy',
    '-movflags', '+faststart',
    '-f', 'mp4',
    o.output,
  ];
}

/**
 * SPEC §19 layout: the rung's video and the default audio rendition (separate MPEG-TS files,
 * one timeline) remuxed together into one MP4 without re-encoding.
 */
export function remuxMp4WithAudioArgs(o: { input: string; inputArgs?: readonly string[]; audio: string; audioArgs?: readonly string[]; output: string }): string[] {
  return [
    ...GLOBAL_ARGS,
    ...(o.inputArgs ?? []), '-i', o.input,
    ...(o.audioArgs ?? []), '-i', o.audio,
    '-map', '0:v:0',
    '-map', '1:a:0', '-bsf:a', 'aac_adtstoasc',
    '-c', 'copy',
    '-movflags', '+faststart',
    '-f', 'mp4',
    o.output,
  ];
}

/** The AAC track alone, copied into an .m4a. */
export function audioOnlyArgs(o: { input: string; inputArgs?: readonly string[]; output: string }): string[] {
  return [...GLOBAL_ARGS, ...(o.inputArgs ?? []), '-i', o.input, '-map', '0:a:0', '-c:a', 'copy', '-bsf:a', 'aac_adtstoasc', '-movflags', '+faststart', '-f', 'ipod', o.output];
}

export interface StoryboardPlan {
  /** Seconds between tiles. */
  interval: number;
  tiles: number;
  columns: number;
  rows: number;
  tileWidth: number;
  tileHeight: number;
}

/**
 * Tiles for seek previews: one a second for short videos, at least one per 10 s, at most 200
 * (past 2000 s the cap wins and tiles are spread evenly). Tiles keep the video's aspect ratio.
 */
export function planStoryboard(durationSeconds: number, width: number, height: number, tileWidth = 160): StoryboardPlan {
  const d = Math.max(durationSeconds, 0.001);
  let interval = Math.min(10, Math.max(1, d / 100));
  if (Math.ceil(d / interval) > 200) interval = d / 200;
  const tiles = Math.min(200, Math.max(1, Math.ceil(d / interval - 1e-9)));
  const columns = Math.min(10, tiles);
  const tileHeight = Math.max(2, Math.round((tileWidth * height) / width / 2) * 2);
  return { interval, tiles, columns, rows: Math.ceil(tiles / columns), tileWidth, tileHeight };
}

/** One sprite JPEG: a frame every `interval` seconds, scaled to the tile, laid out in a grid. */
export function storyboardArgs(o: { input: string; inputArgs?: readonly string[]; output: string; plan: StoryboardPlan }): string[] {
  const { plan } = o;
  return [
    ...GLOBAL_ARGS,
    ...(o.inputArgs ?? []), '-i', o.input,
    '-map', '0:v:0',
    '-vf',
    `fps=1/${secs(plan.interval)}:round=down,scale=${plan.tileWidth}:${plan.tileHeight},setsar=1,tile=${plan.columns}x${plan.rows}`,
    '-frames:v', '1',
    '-q:v', '4',
    '-f', 'image2',
    '-update', '1',
    o.output,
  ];
}

/** WebVTT whose cues point into the sprite (`#xywh=`), one per tile. */
export function storyboardVtt(plan: StoryboardPlan, durationSeconds: number, spriteUri: string): string {
  const ts = (t: number) => {
    const ms = Math.round(t * 1000);
    const h = Math.floor(ms / 3_600_000);
    const m = Math.floor(ms / 60_000) % 60;
    const s = Math.floor(ms / 1000) % 60;
    const pad = (n: number, w = 2) => String(n).padStart(w, '0');
    return `${pad(h)}:${pad(m)}:${pad(s)}.${pad(ms % 1000, 3)}`;
  };
  const lines = ['WEBVTT', ''];
  for (let i = 0; i < plan.tiles; i++) {
    const start = i * plan.interval;
    const end = Math.min((i + 1) * plan.interval, durationSeconds);
    if (end <= start) break;
    const x = (i % plan.columns) * plan.tileWidth;
    const y = Math.floor(i / plan.columns) * plan.tileHeight;
    lines.push(`${ts(start)} --> ${ts(end)}`, `${spriteUri}#xywh=${x},${y},${plan.tileWidth},${plan.tileHeight}`, '');
  }
  return lines.join('\n');
}

/**
 * A clip of the original, frame-accurate: decoding from the keyframe before `start` and
 * re-encoding (a stream copy could only cut on keyframes). High quality: the clip is processed
 * again like any upload, so this is an intermediate.
 */
export function clipArgs(o: { input: string; inputArgs?: readonly string[]; output: string; start: number; end: number; hasAudio: boolean }): string[] {
  return [
    ...GLOBAL_ARGS,
    '-ss', secs(o.start),
    ...(o.inputArgs ?? []), '-i', o.input,
    '-t', secs(o.end - o.start),
    '-map', '0:v:0',
    ...(o.hasAudio ? ['-map', '0:a:0?'] : []),
    '-c:v', 'libx264',
    '-preset', 'veryfast',
    '-crf', '18',
    '-pix_fmt', 'yuv420p',
    ...(o.hasAudio ? ['-c:a', 'aac', '-b:a', '192k'] : ['-an']),
    '-movflags', '+faststart',
    '-f', 'mp4',
    o.output,
  ];
}

/**
 * The first audio stream as the forced aligner hears it (issue 37): 16 kHz mono 32-bit float PCM,
 * raw (no header to parse in the aligner). A 10-minute talk is 38 MB.
 */
export function speechPcmArgs(o: { input: string; inputArgs?: readonly string[]; output: string }): string[] {
  return [...GLOBAL_ARGS, ...(o.inputArgs ?? []), '-i', o.input, '-map', '0:a:0', '-vn', '-sn', '-dn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_f32le', '-f', 'f32le', o.output];
}
