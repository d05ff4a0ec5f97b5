// Legitimate sources in many containers and codecs, 1 s each, generated with Debian's ffmpeg.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const cacheDir = path.join(os.tmpdir(), 'vidhost-fixtures', 'sources');

export type Source = { name: string; file: string; contentType: string; portrait?: boolean; audio: boolean };

const V = (size: string, rate = 24) => ['-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=${rate}:duration=1`];
const A = (rate = 48000, layout = 'stereo') => ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=${rate}:duration=1,aformat=channel_layouts=${layout}`];

const RECIPES: Array<{ name: string; ext: string; contentType: string; portrait?: boolean; audio: boolean; args: string[]; remux?: string[] }> = [
  {
    name: 'HEVC 10-bit with a 90° rotation matrix (MP4)',
    ext: 'mp4',
    contentType: 'video/mp4',
    portrait: true,
    audio: true,
    args: [...V('320x240'), ...A(), '-c:v', 'libx265', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p10le', '-x265-params', 'log-level=error',
      '-tag:v', 'hvc1', '-c:a', 'aac', '-b:a', '64k'],
    // ffmpeg 5.1 drops the rotate tag when encoding; a stream copy turns it into a display matrix.
    remux: ['-c', 'copy', '-metadata:s:v:0', 'rotate=90'],
  },
  {
    name: 'VP9 + Opus (WebM)',
    ext: 'webm',
    contentType: 'video/webm',
    audio: true,
    args: [...V('320x240'), ...A(), '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '300k', '-c:a', 'libopus', '-b:a', '48k'],
  },
  {
    name: 'ProRes 422 Proxy + PCM (MOV)',
    ext: 'mov',
    contentType: 'video/quicktime',
    audio: true,
    args: [...V('320x240'), ...A(), '-c:v', 'prores_ks', '-profile:v', '0', '-c:a', 'pcm_s16le'],
  },
  {
    name: 'MPEG-2 + MP2 (MPEG-TS)',
    ext: 'ts',
    contentType: 'video/mp2t',
    audio: true,
    args: [...V('320x240', 25), ...A(), '-c:v', 'mpeg2video', '-b:v', '800k', '-c:a', 'mp2', '-f', 'mpegts'],
  },
  {
    name: 'H.264 + 5.1 FLAC at 96 kHz (Matroska)',
    ext: 'mkv',
    contentType: 'video/x-matroska',
    audio: true,
    args: [...V('320x240'), ...A(96000, '5.1'), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'flac'],
  },
  {
    name: 'odd-sized (321x179) variable-frame-rate H.264 (MP4)',
    ext: 'mp4',
    contentType: 'video/mp4',
    audio: false,
    // Frames dropped irregularly and timestamps kept: a VFR stream. 4:4:4 because x264's 4:2:0 needs even sizes.
    args: ['-f', 'lavfi', '-i', 'testsrc=size=321x179:rate=30:duration=1', '-vf', "select='not(mod(n\\,3))+lt(n\\,7)'", '-fps_mode', 'vfr', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv444p'],
  },
  {
    name: 'MJPEG + PCM (AVI)',
    ext: 'avi',
    contentType: 'video/x-msvideo',
    audio: true,
    args: [...V('320x240'), ...A(), '-c:v', 'mjpeg', '-q:v', '5', '-c:a', 'pcm_s16le'],
  },
];

/** Every legitimate source (generated once per machine, cached by name). */
export async function legitSources(): Promise<Source[]> {
  fs.mkdirSync(cacheDir, { recursive: true });
  const out: Source[] = [];
  for (const [i, r] of RECIPES.entries()) {
    const file = path.join(cacheDir, `source${i}.${r.ext}`);
    if (!fs.existsSync(file)) {
      const tmp = `${file}.${process.pid}.tmp.${r.ext}`;
      await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...r.args, tmp]);
      if (r.remux) {
        await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', '-i', tmp, ...r.remux, file]);
        fs.rmSync(tmp);
      } else {
        fs.renameSync(tmp, file);
      }
    }
    out.push({ name: r.name, file, contentType: r.contentType, portrait: r.portrait, audio: r.audio });
  }
  return out;
}
