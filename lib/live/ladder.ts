// Pure: the input bounds of SPEC §17 and the live ladder (no upscaling; the source as a
// passthrough rung when HLS can carry it as is).
import { planLadder, type Rung } from '../media/ladder';
import { type Mark, markedFilter } from '../media/watermark';
import { edgePushSlave, teeEscape } from './push';
import type { FeedInfo } from './feed-info';
import { type WebrtcRendition, webrtcOutputArgs } from './webrtc';

export type { FeedInfo } from './feed-info';

export const LIVE_BOUNDS = { maxLong: 1920, maxShort: 1080, maxFps: 60, maxBitrate: 20_000_000, video: ['h264', 'hevc'], audio: ['aac', 'opus'] } as const;

/** Why a feed is refused, or null when it is within bounds. */
export function outOfBounds(f: FeedInfo): string | null {
  if (!f.videoCodec) return 'the feed has no video';
  if (!(LIVE_BOUNDS.video as readonly string[]).includes(f.videoCodec)) return `video codec ${f.videoCodec} is not accepted (H.264 or HEVC)`;
  if (f.audioCodec && !(LIVE_BOUNDS.audio as readonly string[]).includes(f.audioCodec)) return `audio codec ${f.audioCodec} is not accepted (AAC or Opus)`;
  const long = Math.max(f.width, f.height);
  const short = Math.min(f.width, f.height);
  if (!(short > 0)) return 'the feed has no picture size';
  if (long > LIVE_BOUNDS.maxLong || short > LIVE_BOUNDS.maxShort) return `${f.width}x${f.height} is over 1080p`;
  if (f.fps && f.fps > LIVE_BOUNDS.maxFps + 0.5) return `${f.fps} fps is over 60`;
  if (f.bitrate && f.bitrate > LIVE_BOUNDS.maxBitrate) return `${Math.round(f.bitrate / 1e6)} Mb/s is over 20 Mb/s`;
  return null;
}

export interface LiveRung {
  name: string;
  width: number;
  height: number;
  /** bits/s: the encode target, or the declared bitrate of the source (0 when unknown). */
  bitrate: number;
  /** null: the source copied as is. */
  encode: Rung | null;
}

/**
 * At most three rungs: the source itself when H.264 (+AAC) lets it pass through, and the
 * highest and lowest rungs of the VOD ladder below it (the middle one too without passthrough).
 * Live encodes run in real time, so the ladder is shorter than for uploads.
 */
export function planLiveLadder(f: FeedInfo, opts: { passthrough: boolean; marked?: boolean }): LiveRung[] {
  const short = Math.min(f.width, f.height);
  // A watermarked stream (SPEC §24) has every rung encoded: the source carries no mark.
  const passthrough = opts.passthrough && !opts.marked && f.videoCodec === 'h264' && (f.audioCodec === null || f.audioCodec === 'aac');
  const all = planLadder({ width: f.width, height: f.height });
  const below = passthrough ? all.filter((r) => Math.min(r.width, r.height) < short) : all;
  const pick: Rung[] = [];
  if (below.length) pick.push(below[below.length - 1]);
  if (below.length > 1) pick.push(below[0]);
  if (!passthrough && below.length > 2) pick.push(below[Math.floor((below.length - 1) / 2)]);
  const rungs: LiveRung[] = pick.map((r) => ({ name: r.name, width: r.width, height: r.height, bitrate: r.videoBitrate + r.audioBitrate, encode: r }));
  if (passthrough) rungs.push({ name: 'source', width: f.width, height: f.height, bitrate: f.bitrate ?? 0, encode: null });
  return rungs.sort((a, b) => b.height - a.height);
}

/**
 * The encoded rungs' frame rate (`-r`, constant): the feed's probed average rate when it is a
 * camera's (1–60 fps; 29.97 and 59.94 as their exact fractions), else 30. Without it ffmpeg
 * takes the input's guessed rate (tbr), which for a WebRTC source whose frames arrive unevenly
 * (a loaded machine, a browser's encoder) can be its 90 kHz clock: ffmpeg then duplicated each
 * frame thousands of times to fill 90,000 fps, spent its CPU on copies, cut no segment for minutes
 * and the broadcast never went active.
 */
export function liveOutputRate(fps: number | null | undefined): string {
  if (!fps || !(fps >= 1) || fps > 60.5) return '30';
  for (const [n, d] of [[24000, 1001], [30000, 1001], [60000, 1001]]) if (Math.abs(fps - n / d) < 0.005) return `${n}/${d}`;
  return String(Math.round(fps * 1000) / 1000);
}

/** ffmpeg/ffprobe input options for the edge's feed: http over tcp, the MPEG-TS demuxer only, its credential. */
export function feedInputArgs(headers?: string): string[] {
  // 1 s of analysis (ffmpeg's default is 5 s): the feed starts on a keyframe with its tracks
  // known, so a longer look only delays the first segment (measured 5.6 s → 3.1 s under load).
  return ['-rw_timeout', '5000000', '-protocol_whitelist', 'http,tcp', '-format_whitelist', 'mpegts', '-f', 'mpegts', '-analyzeduration', '1000000', '-probesize', '1000000', ...(headers ? ['-headers', headers] : [])];
}

/**
 * ffmpeg arguments: one decode, one HLS output per rung, segments `seg_%06d.ts` from each rung's
 * next number. With `llhls` (SPEC §22, `latency_mode: low`), each rung's encode also goes, through
 * the tee muxer, as MPEG-TS by HTTP PUT to the live edge's LL-HLS packager (edgePushSlave). With
 * `webrtc`, one more output: the rendition WHEP viewers get (lib/live/webrtc.ts). With `mark`,
 * every encode burns the watermark in (lib/media/watermark.ts, the one builder).
 */
export function liveFfmpegArgs(o: {
  input: string;
  dir: string;
  rungs: LiveRung[];
  startNumbers: Record<string, number>;
  segmentSeconds: number;
  /** Keyframe interval of the encoded rungs (default: segmentSeconds). */
  gopSeconds?: number;
  preset: string;
  hasAudio: boolean;
  /** The edge's ingest URL of a rung (`{edge}/hls/{ls}/{rung}/ingest`). */
  llhls?: (rung: string) => string;
  /** HTTP headers of those PUTs (`Authorization: Bearer …\r\n`, the edge's credential: lib/live/edge.ts). */
  llhlsHeaders?: string;
  /** Also list the feed's packets on stdout (framecrc, lib/live/health.ts): the stream health of RTMP feeds. */
  meter?: boolean;
  /** SPEC §24: the stream's watermark, burnt into every encoded rung and the WebRTC rendition (no rung is copied: planLiveLadder's `marked`). */
  mark?: Mark | null;
  /** SPEC §22: one more output, the rendition WHEP viewers get (lib/live/webrtc.ts), PUT to the edge with llhlsHeaders. */
  webrtc?: WebrtcRendition;
  /** HTTP headers of the input's GET (the edge's credential for `GET /feed/{ls}`, lib/live/feed.ts). */
  inputHeaders?: string;
  /** The feed's probed frame rate (FeedInfo.fps): the encoded outputs' constant rate (liveOutputRate). */
  fps?: number | null;
}): string[] {
  // The input: the live edge's feed of the broadcast (MPEG-TS over HTTP), nothing else.
  const args = ['-hide_banner', '-loglevel', 'warning', '-nostats', ...feedInputArgs(o.inputHeaders), '-i', o.input];
  const gop = o.gopSeconds ?? o.segmentSeconds;
  const rate = ['-fps_mode', 'cfr', '-r', liveOutputRate(o.fps)];
  const hlsOpts = (name: string): Array<[string, string]> => [
    ['hls_time', String(o.segmentSeconds)],
    ['hls_list_size', '30'],
    ['hls_flags', 'independent_segments+program_date_time+temp_file'],
    ['start_number', String(o.startNumbers[name] ?? 0)],
    ['hls_segment_filename', `${o.dir}/${name}/seg_%06d.ts`],
  ];
  const output = (name: string): string[] => {
    if (!o.llhls) return ['-f', 'hls', ...hlsOpts(name).flatMap(([k, v]) => [`-${k}`, v]), `${o.dir}/${name}/index.m3u8`];
    const value = (v: string) => teeEscape(teeEscape(v));
    const hls = `[f=hls:${hlsOpts(name).map(([k, v]) => `${k}=${value(v)}`).join(':')}]${teeEscape(`${o.dir}/${name}/index.m3u8`)}`;
    return ['-f', 'tee', `${hls}|${edgePushSlave(o.llhls(name), o.llhlsHeaders)}`];
  };
  for (const r of o.rungs) {
    args.push('-map', '0:v:0');
    if (o.hasAudio) args.push('-map', '0:a:0');
    if (!r.encode) {
      args.push('-c', 'copy', ...output(r.name));
      continue;
    }
    const e = r.encode;
    args.push(
      '-c:v', 'libx264', '-preset', o.preset, '-tune', 'zerolatency', '-pix_fmt', 'yuv420p', ...rate,
      '-vf', markedFilter({ chain: `scale=${r.width}:${r.height}`, frame: r, mark: o.mark }),
      '-b:v', String(e.videoBitrate), '-maxrate', String(e.maxrate), '-bufsize', String(e.bufsize),
      '-force_key_frames', `expr:gte(t,n_forced*${gop})`, '-sc_threshold', '0',
    );
    if (o.hasAudio) args.push('-c:a', 'aac', '-b:a', String(e.audioBitrate), '-ac', '2');
    args.push(...output(r.name));
  }
  if (o.webrtc) args.push(...webrtcOutputArgs({ ...o.webrtc, hasAudio: o.hasAudio, preset: o.preset, mark: o.mark, headers: o.llhlsHeaders, rate }));
  if (o.meter) {
    args.push('-map', '0:v:0');
    if (o.hasAudio) args.push('-map', '0:a:0');
    args.push('-c', 'copy', '-f', 'framecrc', 'pipe:1');
  }
  return args;
}
