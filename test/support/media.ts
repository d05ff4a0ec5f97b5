import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cacheDir = path.join(os.tmpdir(), 'vidhost-fixtures');

export interface ClipOptions {
  width: number;
  height: number;
  seconds: number;
  audio?: boolean;
  fps?: number;
  /** Default h264; hevc makes a source the passthrough cannot take. */
  codec?: 'h264' | 'hevc';
  /** Keyframe interval in frames (default: one a second). */
  gop?: number;
  /** Average video bitrate, bits/s (default: whatever ultrafast makes; ~13 Mb/s at 1080p). */
  videoBitrate?: number;
  /** Picture: testsrc2 (default, flat shapes) or `noise` (testsrc2 under heavy temporal noise: hard to compress, like grainy film). */
  content?: 'testsrc' | 'noise';
  /**
   * The audio track is digital silence instead of a 440 Hz tone: still a real AAC track on the same
   * timeline, but the stack's AAC encode of it costs about a fifth (10 minutes of the tone take
   * ~12 CPU s to encode at 128 kb/s stereo, of silence ~2.5).
   */
  silentAudio?: boolean;
}

/** A generated H.264/AAC MP4 (cached across tests by its parameters). */
export async function makeClip(o: ClipOptions): Promise<string> {
  const fps = o.fps ?? 24;
  const audio = o.audio ?? true;
  fs.mkdirSync(cacheDir, { recursive: true });
  const codec = o.codec ?? 'h264';
  const gop = o.gop ?? fps;
  const variant = (codec === 'h264' ? '' : `_${codec}`) + (gop === fps ? '' : `_g${gop}`) + (o.videoBitrate ? `_b${o.videoBitrate}` : '') + (o.content === 'noise' ? '_noise' : '') + (audio && o.silentAudio ? '_silent' : '');
  const file = path.join(cacheDir, `clip_${o.width}x${o.height}_${o.seconds}s_${fps}fps_${audio ? 'a' : 'na'}${variant}.mp4`);
  if (fs.existsSync(file)) return file;
  const tmp = `${file}.${process.pid}.tmp.mp4`;
  const args = ['-hide_banner', '-loglevel', 'error', '-y', '-f', 'lavfi', '-i', `testsrc2=size=${o.width}x${o.height}:rate=${fps}:duration=${o.seconds}${o.content === 'noise' ? ',noise=alls=40:allf=t+u' : ''}`];
  if (audio) args.push('-f', 'lavfi', '-i', o.silentAudio ? `anullsrc=r=48000:cl=mono,atrim=duration=${o.seconds}` : `sine=frequency=440:sample_rate=48000:duration=${o.seconds}`);
  args.push('-c:v', codec === 'h264' ? 'libx264' : 'libx265', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', String(gop));
  if (o.videoBitrate) args.push('-b:v', String(o.videoBitrate), '-maxrate', String(Math.round(o.videoBitrate * 1.5)), '-bufsize', String(o.videoBitrate * 2));
  if (codec === 'h264' && gop !== fps) args.push('-sc_threshold', '0', '-keyint_min', String(gop));
  if (codec === 'hevc') args.push('-x265-params', 'log-level=error', '-tag:v', 'hvc1');
  if (audio) args.push('-c:a', 'aac', '-b:a', '64k');
  args.push('-movflags', '+faststart', tmp);
  await run('ffmpeg', args);
  fs.renameSync(tmp, file);
  return file;
}

/**
 * `src` played `times` times in a row, stream-copied (no encode): a long source made in about a
 * second per 10 minutes (SPEC §23 tests and bench). Cached by name.
 */
export async function loopedClip(src: string, times: number): Promise<string> {
  const file = path.join(cacheDir, `loop${times}_${path.basename(src)}`);
  if (fs.existsSync(file)) return file;
  const tmp = `${file}.${process.pid}.tmp.mp4`;
  await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-stream_loop', String(times - 1), '-i', src, '-c', 'copy', '-movflags', '+faststart', tmp]);
  fs.renameSync(tmp, file);
  return file;
}

/** The first `fraction` of a file: a truncated upload. */
export function truncatedCopy(src: string, fraction: number): string {
  const buf = fs.readFileSync(src);
  const out = path.join(cacheDir, `truncated_${fraction}_${path.basename(src)}`);
  fs.writeFileSync(out, buf.subarray(0, Math.floor(buf.length * fraction)));
  return out;
}

export async function ffprobeJson(input: string): Promise<{ streams: Array<Record<string, unknown>>; format: Record<string, unknown> }> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-print_format', 'json', '-show_streams', '-show_format', input]);
  return JSON.parse(stdout);
}
