import { stat } from 'node:fs/promises';
import ffmpeg from 'fluent-ffmpeg';
import type { FfprobeData, FfprobeStream } from 'fluent-ffmpeg';
import { MediaError } from './errors';

export { MediaError } from './errors';
export type { MediaErrorCode } from './errors';
export { checkFfmpeg } from './check';

export type MediaInfo = {
  durationSeconds: number | null;
  /** Stored (coded) dimensions; apply `rotation` for display (planLadder does). */
  width: number;
  height: number;
  /** Clockwise degrees the player rotates the picture: 0, 90, 180 or 270. */
  rotation: number;
  fps: number | null;
  videoCodec: string | null;
  hasAudio: boolean;
  formatName: string | null;
  sizeBytes: number | null;
};

// Demuxers that "succeed" on things that are not videos: text files (tty) and still images.
const NOT_VIDEO_FORMATS = /^(tty|image2|[a-z0-9]+_pipe)$/;

const isUrl = (input: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(input);

function num(value: unknown): number | null {
  if (typeof value !== 'number' && typeof value !== 'string') return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

function rate(value: unknown): number | null {
  if (typeof value !== 'string') return num(value);
  const [a, b] = value.split('/').map(Number);
  const r = b === undefined ? a : a / b;
  return Number.isFinite(r) && r > 0 ? Math.round(r * 1000) / 1000 : null;
}

const normalizeDegrees = (deg: number): number => (((Math.round(deg / 90) * 90) % 360) + 360) % 360;

function rotationOf(stream: FfprobeStream): number {
  // Display-matrix rotation is counter-clockwise; the legacy `rotate` tag is clockwise.
  const sideData: unknown = stream.side_data_list;
  if (Array.isArray(sideData)) {
    for (const sd of sideData as Array<Record<string, unknown>>) {
      const r = num(sd.rotation);
      if (r !== null) return normalizeDegrees(-r);
    }
  }
  // fluent-ffmpeg flattens [SIDE_DATA] blocks into the stream, so `rotation` lands here.
  const flattened = num(stream.rotation);
  if (flattened !== null) return normalizeDegrees(-flattened);
  const tags = stream.tags as Record<string, unknown> | undefined;
  const tag = num(tags?.rotate);
  return tag === null ? 0 : normalizeDegrees(tag);
}

function shortReason(err: unknown, input: string): string {
  const text = err instanceof Error ? err.message : String(err);
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const last = lines[lines.length - 1] ?? 'unknown error';
  // ffprobe prefixes the message with the input path; users do not need our temp paths.
  return last.startsWith(`${input}: `) ? last.slice(input.length + 2) : last;
}

const undecodable = (reason: string, cause?: unknown): MediaError =>
  new MediaError('invalid_media', `The file could not be decoded as video (ffprobe: ${reason})`, { cause });

function ffprobe(input: string, ffprobePath?: string): Promise<FfprobeData> {
  // fluent-ffmpeg keeps the ffprobe path in module-global state.
  if (ffprobePath) ffmpeg.setFfprobePath(ffprobePath);
  return new Promise((resolve, reject) => {
    let done = false;
    ffmpeg.ffprobe(input, ['-v', 'error'], (err: unknown, data: FfprobeData) => {
      if (done) return;
      done = true;
      if (err) reject(err);
      else resolve(data);
    });
  });
}

/**
 * Reads container and stream metadata. Throws MediaError for inputs that are not usable videos;
 * other errors (missing ffprobe, missing file) propagate unchanged.
 */
export async function probe(input: string, options: { ffprobePath?: string } = {}): Promise<MediaInfo> {
  let fileSize: number | null = null;
  if (!isUrl(input)) {
    const st = await stat(input);
    if (!st.isFile()) throw new Error(`probe: ${input} is not a regular file`);
    if (st.size === 0) throw new MediaError('invalid_media', 'The file is empty');
    fileSize = st.size;
  }

  let data: FfprobeData;
  try {
    data = await ffprobe(input, options.ffprobePath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message = err instanceof Error ? err.message : '';
    if (code === 'ENOENT' || message.startsWith('Cannot find ffprobe')) {
      throw new Error('ffprobe not found (install the Debian package: apt-get install -y ffmpeg)', { cause: err });
    }
    if (message.startsWith('ffprobe exited with code')) throw undecodable(shortReason(err, input), err);
    throw err;
  }

  const formatName = typeof data.format.format_name === 'string' ? data.format.format_name : null;
  if (formatName && NOT_VIDEO_FORMATS.test(formatName)) {
    throw undecodable(formatName === 'tty' ? 'text file' : `still image (${formatName})`);
  }

  const streams = data.streams ?? [];
  // Cover art in audio files is a one-frame "video" stream flagged attached_pic.
  const video = streams.find((s) => s.codec_type === 'video' && !num(s.disposition?.attached_pic));
  if (!video) throw new MediaError('no_video_stream', 'The file has no video stream');

  const width = num(video.width) ?? 0;
  const height = num(video.height) ?? 0;
  if (width <= 0 || height <= 0) throw undecodable('video stream has no dimensions');

  const duration = num(data.format.duration) ?? num(video.duration);
  return {
    durationSeconds: duration !== null && duration > 0 ? duration : null,
    width,
    height,
    rotation: rotationOf(video),
    fps: rate(video.avg_frame_rate) ?? rate(video.r_frame_rate),
    videoCodec: video.codec_name && video.codec_name !== 'unknown' ? video.codec_name : null,
    hasAudio: streams.some((s) => s.codec_type === 'audio'),
    formatName,
    sizeBytes: num(data.format.size) ?? fileSize,
  };
}
