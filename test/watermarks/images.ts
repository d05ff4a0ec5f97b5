// Watermark images for the tests: real ones made by ffmpeg, hostile ones made byte by byte.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const run = promisify(execFile);

/** A solid `color` image `width`×`height` (png or jpg) made by ffmpeg; `frames` > 1 makes an APNG. */
export async function solidImage(color: string, width: number, height: number, ext: 'png' | 'jpg' = 'png', frames = 1): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vidhost-wm-img-'));
  const file = path.join(dir, `m.${ext}`);
  try {
    const format = frames > 1 ? ['-f', 'apng', '-plays', '0'] : [];
    await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `color=c=${color}:s=${width}x${height}:r=5`, '-frames:v', String(frames), ...format, file]);
    return await fs.readFile(file);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * A PNG whose header says `width`×`height` around `idat` (default: the right amount of zeros, at
 * most 1 MB), with `extra` chunks before it; lengths as the format wants them, CRCs left zero (the
 * inspector checks structure, not CRCs).
 */
export function craftedPng(width: number, height: number, idat?: Buffer, extra: Array<[string, Buffer]> = []): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    return Buffer.concat([len, Buffer.from(type, 'latin1'), data, Buffer.alloc(4)]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const raw = idat ?? zlib.deflateSync(Buffer.alloc(Math.min(1e6, (1 + width * 4) * height)));
  return Buffer.concat([signature, chunk('IHDR', ihdr), ...extra.map(([t, d]) => chunk(t, d)), chunk('IDAT', raw), chunk('IEND', Buffer.alloc(0))]);
}

/** A JPEG `jpeg` with its frame header's component count set to 4 (CMYK). */
export function asCmyk(jpeg: Buffer): Buffer {
  const out = Buffer.from(jpeg);
  for (let at = 2; at + 9 < out.length; ) {
    const marker = out[at + 1];
    if (marker >= 0xc0 && marker <= 0xc2) {
      out[at + 9] = 4;
      return out;
    }
    at += 2 + out.readUInt16BE(at + 2);
  }
  throw new Error('no SOF in the JPEG');
}
