// A corpus of hostile "videos", built by the tests (issue 9).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const corpusDir = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'vh-hostile-'));

const ffmpeg = (args: string[]) => run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args]);

/** An HLS playlist (text) whose one segment is `entry`: a path, a file:// or http:// URL, a data: URI. */
export function hlsPlaylist(dir: string, name: string, entry: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:2.0,\n${entry}\n#EXT-X-ENDLIST\n`);
  return file;
}

export function ffconcatList(dir: string, name: string, entry: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `ffconcat version 1.0\nfile '${entry}'\n`);
  return file;
}

export function concatList(dir: string, name: string, entry: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `file '${entry}'\nfile '${entry}'\n`);
  return file;
}

export function dashManifest(dir: string, name: string, url: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(
    file,
    `<?xml version="1.0"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT2S" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">` +
      `<Period><AdaptationSet mimeType="video/mp4"><Representation id="1" bandwidth="100000" width="64" height="48"><BaseURL>${url}</BaseURL></Representation></AdaptationSet></Period></MPD>\n`,
  );
  return file;
}

/** A still PNG (what an image-sequence pattern would read), named with a pattern. */
export async function stillImage(dir: string, name: string): Promise<string> {
  const file = path.join(dir, name.replace(/%/g, 'pct'));
  await ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x64', '-frames:v', '1', '-f', 'image2', '-c:v', 'png', file]);
  const named = path.join(dir, name);
  fs.renameSync(file, named);
  return named;
}

/** Decompression bomb: a 16x16 MJPEG AVI of a few KB whose headers and JPEG frames declare 16000x16000. */
export async function dimensionBomb(dir: string, side = 16000): Promise<string> {
  const small = path.join(dir, 'bomb-src.avi');
  await ffmpeg(['-f', 'lavfi', '-i', 'color=c=gray:size=16x16:rate=1:duration=1', '-c:v', 'mjpeg', '-q:v', '2', small]);
  const b = fs.readFileSync(small);
  const avih = b.indexOf('avih');
  b.writeUInt32LE(side, avih + 8 + 32); // dwWidth
  b.writeUInt32LE(side, avih + 8 + 36); // dwHeight
  const strf = b.indexOf('strf');
  b.writeInt32LE(side, strf + 8 + 4); // biWidth
  b.writeInt32LE(side, strf + 8 + 8); // biHeight
  for (let i = b.indexOf(Buffer.from([0xff, 0xc0])); i >= 0; i = b.indexOf(Buffer.from([0xff, 0xc0]), i + 2)) {
    b.writeUInt16BE(side, i + 5); // SOF0 height
    b.writeUInt16BE(side, i + 7); // SOF0 width
  }
  const out = path.join(dir, 'bomb.avi');
  fs.writeFileSync(out, b);
  return out;
}

/** A 1 s MP4 whose movie and media headers declare ~55 hours. */
export async function hugeDuration(dir: string): Promise<string> {
  const src = path.join(dir, 'long-src.mp4');
  await ffmpeg(['-f', 'lavfi', '-i', 'testsrc2=size=64x48:rate=10:duration=1', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-movflags', '+faststart', src]);
  const b = fs.readFileSync(src);
  for (const box of ['mvhd', 'mdhd']) {
    for (let i = b.indexOf(box); i >= 0; i = b.indexOf(box, i + 4)) {
      if (b[i + 4] !== 0) continue; // version 0 only: ctime(4) mtime(4) timescale(4) duration(4)
      const timescale = b.readUInt32BE(i + 4 + 4 + 8);
      b.writeUInt32BE(Math.min(0xfffffff0, timescale * 200_000), i + 4 + 4 + 12);
    }
  }
  const out = path.join(dir, 'long.mp4');
  fs.writeFileSync(out, b);
  return out;
}
