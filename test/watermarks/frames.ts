// Decoding one frame of an output to RGB and looking at its pixels (real ffmpeg).
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export type Frame = { width: number; height: number; rgb: Buffer };

/** The frame at `at` seconds (default the first) of an encoded file's bytes. */
export async function decodeFrame(bytes: Buffer, ext: string, at = 0): Promise<Frame> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vidhost-wm-frame-'));
  const file = path.join(dir, `in.${ext}`);
  try {
    await fs.writeFile(file, bytes);
    const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'json', file]);
    const { width, height } = (JSON.parse(stdout) as { streams: Array<{ width: number; height: number }> }).streams[0];
    const seek = at > 0 ? ['-ss', String(at)] : [];
    const { stdout: rgb } = await run('ffmpeg', ['-v', 'error', ...seek, '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'], { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
    return { width, height, rgb: rgb as unknown as Buffer };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export const pixel = (f: Frame, x: number, y: number): [number, number, number] => {
  const i = (Math.round(y) * f.width + Math.round(x)) * 3;
  return [f.rgb[i], f.rgb[i + 1], f.rgb[i + 2]];
};

/** Magenta (the test mark) and blue (the test video), with room for the encoders' colour error. */
export const isMagenta = ([r, g, b]: number[]) => r > 180 && g < 80 && b > 180;
export const isBlue = ([r, g, b]: number[]) => r < 80 && g < 80 && b > 150;
