import { open, stat } from 'node:fs/promises';
import { MediaError, isRefusedInput, isTransportError, REFUSED_INPUT_MESSAGE } from './errors';
import { allowedDemuxer, isRemoteInput, safeInputArgs } from './input';
import { FfmpegError, runFfprobe } from './run';
import type { SourceFacts } from './passthrough';
import type { ProbeMemo } from './probe-memo';
import type { SandboxSpec } from './sandbox';
import { describeHead } from './sniff';
import type { AudioStream } from './audio';

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
  /** False for an audio-only source (probed with `allowAudioOnly`); its width and height are 0. */
  hasVideo: boolean;
  /** An attached picture (cover art) is present: an audio file's poster. */
  coverArt: boolean;
  /** Every audio stream, in order (SPEC §19: each becomes a rendition). */
  audioStreams: AudioStream[];
  formatName: string | null;
  /** The allowed demuxer later jobs must force (`-f`); null only when the format check is off. */
  demuxer: string | null;
  sizeBytes: number | null;
  /**
   * The container's start time (ffprobe `format.start_time`): where `-copyts` puts the source's 0
   * (an MPEG-TS source starts at ~1.4 s). Absent in results recorded before issue 47.
   */
  startTime?: number;
  /** Stream details the passthrough rules read (lib/media/passthrough.ts). */
  streams: Pick<SourceFacts, 'video' | 'audio'>;
};

type Stream = Record<string, unknown> & { codec_type?: string; disposition?: Record<string, unknown>; tags?: Record<string, unknown> };
type ProbeData = { format?: Record<string, unknown>; streams?: Stream[] };

// Demuxers that "succeed" on things that are not videos: text files (tty) and still images.
const NOT_VIDEO_FORMATS = /^(tty|image2|[a-z0-9]+_pipe)$/;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

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

function rotationOf(stream: Stream): number {
  // Display-matrix rotation is counter-clockwise; the legacy `rotate` tag is clockwise.
  const sideData: unknown = stream.side_data_list;
  if (Array.isArray(sideData)) {
    for (const sd of sideData as Array<Record<string, unknown>>) {
      const r = num(sd.rotation);
      if (r !== null) return normalizeDegrees(-r);
    }
  }
  const tag = num(stream.tags?.rotate);
  return tag === null ? 0 : normalizeDegrees(tag);
}

function shortReason(stderr: string, input: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean);
  const last = lines[lines.length - 1] ?? 'unknown error';
  // ffprobe prefixes the message with the input path; users do not need our paths.
  return last.startsWith(`${input}: `) ? last.slice(input.length + 2) : last;
}

const undecodable = (reason: string, cause?: unknown): MediaError =>
  new MediaError('invalid_media', `The file could not be decoded as video (ffprobe: ${reason})`, { cause });

async function headOf(input: string): Promise<Buffer> {
  const fh = await open(input, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

async function refused(input: string, cause?: unknown): Promise<MediaError> {
  const what = isRemoteInput(input) ? null : describeHead(await headOf(input).catch(() => Buffer.alloc(1, 0xff)));
  return new MediaError('invalid_media', what ? `${REFUSED_INPUT_MESSAGE} (this file is ${what})` : REFUSED_INPUT_MESSAGE, { cause });
}

export type ProbeOptions = {
  ffprobePath?: string;
  sandbox?: SandboxSpec;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Test-only: false opens the input without the allow-lists (to prove the sandbox holds alone). */
  formatCheck?: boolean;
  /** SPEC §19: a source with audio and no video is accepted (else `no_video_stream`). */
  allowAudioOnly?: boolean;
  /** Remembers ffprobe's answer for a local file's bytes (lib/media/probe-memo.ts). */
  memo?: ProbeMemo;
};

/**
 * Reads container and stream metadata, opening the input with the allow-lists (SPEC §12).
 * Throws MediaError for inputs that are not usable videos; other errors (missing ffprobe,
 * missing file) propagate unchanged.
 */
export async function probe(input: string, options: ProbeOptions = {}): Promise<MediaInfo> {
  const remote = isRemoteInput(input);
  const formatCheck = options.formatCheck ?? true;
  let fileSize: number | null = null;
  if (!remote) {
    const st = await stat(input);
    if (!st.isFile()) throw new Error(`probe: ${input} is not a regular file`);
    if (st.size === 0) throw new MediaError('invalid_media', 'The file is empty');
    fileSize = st.size;
  }

  let data: ProbeData;
  try {
    const args = [
      '-v', 'error', '-hide_banner',
      '-print_format', 'json', '-show_format', '-show_streams',
      ...(formatCheck ? safeInputArgs({ remote }) : []),
      '-i', input,
    ];
    const run = () => runFfprobe(args, { ffprobePath: options.ffprobePath, sandbox: options.sandbox, timeoutMs: options.timeoutMs, signal: options.signal });
    const stdout = options.memo ? await options.memo.get(input, `${options.ffprobePath ?? 'ffprobe'}\0${args.join(' ')}`, run) : await run();
    data = JSON.parse(stdout) as ProbeData;
  } catch (err) {
    if (err instanceof FfmpegError) {
      if (err.limit) throw err;
      if (isRefusedInput(err.stderr)) throw await refused(input, err);
      // Storage unreachable: a plain Error, so the activity retries (SPEC §12 errors are for bad files only).
      if (remote && isTransportError(err.stderr)) throw new Error(`storage unreachable while probing: ${shortReason(err.stderr, input)}`, { cause: err });
      throw undecodable(shortReason(err.stderr, input), err);
    }
    if (err instanceof SyntaxError) throw undecodable('unreadable metadata', err);
    throw err;
  }

  const format = data.format ?? {};
  const formatName = typeof format.format_name === 'string' ? format.format_name : null;
  if (formatName && NOT_VIDEO_FORMATS.test(formatName)) {
    throw undecodable(formatName === 'tty' ? 'text file' : `still image (${formatName})`);
  }
  const demuxer = allowedDemuxer(formatName);
  if (formatCheck && !demuxer) throw await refused(input);

  const streams = data.streams ?? [];
  // Cover art in audio files is a one-frame "video" stream flagged attached_pic.
  const video = streams.find((s) => s.codec_type === 'video' && !num(s.disposition?.attached_pic));
  const audioStreams: AudioStream[] = streams
    .filter((s) => s.codec_type === 'audio')
    .map((s, index) => ({ index, codec: str(s.codec_name), channels: num(s.channels), language: str(s.tags?.language), title: str(s.tags?.title) }));
  const coverArt = streams.some((s) => s.codec_type === 'video' && num(s.disposition?.attached_pic));
  if (!video && options.allowAudioOnly && audioStreams.length > 0) {
    const duration = num(format.duration) ?? num(streams.find((s) => s.codec_type === 'audio')?.duration);
    return {
      streams: { video: { codec: null, profile: null, pixFmt: null, level: null, bitrate: null }, audio: null },
      durationSeconds: duration !== null && duration > 0 ? duration : null,
      width: 0, height: 0, rotation: 0, fps: null, videoCodec: null,
      hasAudio: true, hasVideo: false, coverArt, audioStreams, formatName, demuxer,
      sizeBytes: num(format.size) ?? fileSize,
    };
  }
  if (!video) throw new MediaError('no_video_stream', 'The file has no video stream');

  const width = num(video.width) ?? 0;
  const height = num(video.height) ?? 0;
  if (width <= 0 || height <= 0) throw undecodable('video stream has no dimensions');

  const duration = num(format.duration) ?? num(video.duration);
  const codec = typeof video.codec_name === 'string' && video.codec_name !== 'unknown' ? video.codec_name : null;
  const audio = streams.find((s) => s.codec_type === 'audio');
  const overall = num(format.bit_rate);
  const audioBitrate = audio ? (num(audio.bit_rate) ?? 0) : 0;
  const details: MediaInfo['streams'] = {
    video: {
      codec: str(video.codec_name),
      profile: typeof video.profile === 'string' ? video.profile : null,
      pixFmt: str(video.pix_fmt),
      level: num(video.level),
      // MKV and some MP4s carry no stream bitrate: the container's, minus the audio, is close.
      bitrate: num(video.bit_rate) ?? (overall !== null ? Math.max(0, overall - audioBitrate) : null),
    },
    audio: audio
      ? { codec: str(audio.codec_name), profile: typeof audio.profile === 'string' ? audio.profile : null, channels: num(audio.channels), sampleRate: num(audio.sample_rate) }
      : null,
  };
  return {
    streams: details,
    durationSeconds: duration !== null && duration > 0 ? duration : null,
    width,
    height,
    rotation: rotationOf(video),
    fps: rate(video.avg_frame_rate) ?? rate(video.r_frame_rate),
    videoCodec: codec,
    hasAudio: streams.some((s) => s.codec_type === 'audio'),
    hasVideo: true,
    coverArt,
    audioStreams,
    formatName,
    demuxer,
    sizeBytes: num(format.size) ?? fileSize,
    startTime: num(format.start_time) ?? 0,
  };
}
