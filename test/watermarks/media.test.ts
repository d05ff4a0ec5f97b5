import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { markBox } from '../../lib/media/watermark';
import { cdnGet } from '../outputs/helpers';
import { allRenditionsReady, isStatus, uploadFormA, waitForVideo } from '../support/flow';
import { startStack, type Stack } from '../support/stack';
import { decodeFrame, isBlue, isMagenta, pixel, type Frame } from './frames';
import { solidImage } from './images';

const run = promisify(execFile);
const uris = (playlist: string) => playlist.split('\n').filter((l) => l && !l.startsWith('#'));
const placement = { position: 'bottom-right' as const, padding: 0.05, scale: 0.15, width: 64, height: 32 };

/** A 4 s solid-blue 640×360 H.264/AAC source: one the passthrough would take as it is. */
async function blueSource(): Promise<string> {
  const file = path.join(os.tmpdir(), 'vidhost-wm-blue-640x360-4s.mp4');
  if (fs.existsSync(file)) return file;
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=blue:s=640x360:r=24:d=4', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=4',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '24', '-c:a', 'aac', '-b:a', '64k', '-movflags', '+faststart', `${file}.tmp.mp4`]);
  fs.renameSync(`${file}.tmp.mp4`, file);
  return file;
}

/** The mark's box on this frame: its centre is magenta; the opposite corner is the video's blue. */
function assertMarked(f: Frame, what: string): void {
  const box = markBox(placement, f);
  const centre = pixel(f, box.x + box.width / 2, box.y + box.height / 2);
  assert.ok(isMagenta(centre), `${what} (${f.width}×${f.height}): the mark's centre at ${JSON.stringify(box)} is ${centre}`);
  const corner = pixel(f, f.width * 0.1, f.height * 0.1);
  assert.ok(isBlue(corner), `${what}: away from the mark the picture is ${corner}`);
}
function assertUnmarked(f: Frame, what: string): void {
  const box = markBox(placement, f);
  const centre = pixel(f, box.x + box.width / 2, box.y + box.height / 2);
  assert.ok(isBlue(centre), `${what}: where a mark would be the picture is ${centre}`);
}

async function bytes(url: string): Promise<Buffer> {
  const res = await fetch(url);
  assert.equal(res.status, 200, url);
  return Buffer.from(await res.arrayBuffer());
}

/** The first and last segment of every rendition in the master, decoded. */
async function renditionFrames(hlsUrl: string): Promise<Array<{ name: string; frame: Frame }>> {
  const master = await (await fetch(hlsUrl)).text();
  const out: Array<{ name: string; frame: Frame }> = [];
  for (const variant of uris(master).filter((u) => u.endsWith('/index.m3u8'))) {
    const playlistUrl = new URL(variant, hlsUrl);
    const segments = uris(await (await fetch(playlistUrl)).text());
    for (const seg of [segments[0], segments[segments.length - 1]]) {
      const ext = seg.endsWith('.m4s') ? 'mp4' : 'ts';
      out.push({ name: `${variant.split('/')[0]}/${seg}`, frame: await decodeFrame(await bytes(new URL(seg, playlistUrl).toString()), ext) });
    }
  }
  return out;
}

/**
 * SPEC §24 with real ffmpeg and Temporal: the mark is found by its colour at the documented
 * place in every rendition (on request and from the ladder), the thumbnail, the MP4 download and
 * an animated GIF; the same source without a mark has none.
 */
describe('watermarks burnt into every output (SPEC §24)', function () {
  this.timeout(300_000);
  let s: Stack;
  let marked: Record<string, any>;
  let plain: Record<string, any>;

  before(async function () {
    this.timeout(200_000);
    s = await startStack();
    const source = await blueSource();
    const wm = await request(s.url).post('/v1/watermarks?position=bottom-right&padding=0.05&scale=0.15').set('Authorization', `Bearer ${s.ws.fullKey}`)
      .set('Content-Type', 'image/png').send(await solidImage('magenta', 64, 32)).expect(201);
    const a = await uploadFormA(s, source, { extra: { watermark_id: wm.body.id, mp4_support: 'capped_1080p' } });
    const b = await uploadFormA(s, source);
    marked = await waitForVideo(s, a.id, isStatus('ready'), 150_000);
    plain = await waitForVideo(s, b.id, isStatus('ready'), 150_000);
  });

  /** The video's storyboard sprite, decoded, and its tiles' boxes from the VTT (`storyboard.jpg#xywh=x,y,w,h`). */
  async function storyboard(id: string): Promise<{ sprite: Frame; tiles: Array<{ x: number; y: number; width: number; height: number }> }> {
    const v = await waitForVideo(s, id, (x) => x.storyboard_url !== null, 150_000);
    const vtt = (await bytes(v.storyboard_url)).toString('utf8');
    const cues = [...vtt.matchAll(/^(\S+)#xywh=(\d+),(\d+),(\d+),(\d+)$/gm)];
    assert.ok(cues.length >= 3, `tiles in the VTT: ${vtt}`);
    const sprite = await decodeFrame(await bytes(new URL(cues[0][1], v.storyboard_url).toString()), 'jpg');
    return { sprite, tiles: cues.map((m) => ({ x: +m[2], y: +m[3], width: +m[4], height: +m[5] })) };
  }

  it('marks every rendition, from the first segment to the last, and is never passed through', async () => {
    // At ready, segments may still be encoded on request: they carry the mark as the ladder's do.
    for (const { name, frame } of await renditionFrames(marked.hls_url)) assertMarked(frame, name);
    const done = await waitForVideo(s, marked.id, allRenditionsReady, 150_000);
    const frames = await renditionFrames(done.hls_url);
    assert.ok(!frames.some((f) => f.name.startsWith('source/')), 'a watermarked source is never published as it is');
    assert.deepEqual([...new Set(frames.map((f) => f.name.split('/')[0]))].sort(), done.renditions.map((r: { name: string }) => r.name).sort());
    for (const { name, frame } of frames) assertMarked(frame, name);
  });

  it('marks the thumbnail, the MP4 download and an animated GIF (made from the marked renditions)', async () => {
    assertMarked(await decodeFrame(await bytes(marked.thumbnail_url), 'jpg'), 'thumbnail');
    const v = await waitForVideo(s, marked.id, (x) => x.static_renditions[0]?.status === 'ready', 150_000);
    const mp4 = (await cdnGet(s, `/v/${v.id}/download/${v.static_renditions[0].name}`).expect(200)).body as Buffer;
    assertMarked(await decodeFrame(mp4, 'mp4', 2), 'MP4 download');
    const gif = (await cdnGet(s, `/v/${v.id}/animated.gif?start=1&end=2&fps=5&width=320`).expect(200)).body as Buffer;
    assertMarked(await decodeFrame(gif, 'gif'), 'animated GIF');
  });

  it('marks the storyboard: the mark at its place in every tile of the sprite (cut from a marked rendition)', async () => {
    const { sprite, tiles } = await storyboard(marked.id);
    for (const [i, t] of tiles.entries()) {
      // A tile is the rendition's picture scaled down: the mark sits where markBox puts it on a tile-sized frame (±1 px).
      const box = markBox(placement, t);
      const centre = pixel(sprite, t.x + box.x + box.width / 2, t.y + box.y + box.height / 2);
      assert.ok(isMagenta(centre), `tile ${i} at ${t.x},${t.y} (${t.width}×${t.height}): the mark's centre at ${JSON.stringify(box)} is ${centre}`);
      const away = pixel(sprite, t.x + t.width * 0.2, t.y + t.height * 0.2);
      assert.ok(isBlue(away), `tile ${i}: away from the mark the picture is ${away}`);
    }
  });

  it('leaves a video without a mark unmarked', async () => {
    assert.equal(plain.watermark_id, null);
    for (const { name, frame } of await renditionFrames(plain.hls_url)) assertUnmarked(frame, name);
    assertUnmarked(await decodeFrame(await bytes(plain.thumbnail_url), 'jpg'), 'thumbnail');
    const { sprite, tiles } = await storyboard(plain.id);
    for (const [i, t] of tiles.entries()) {
      const box = markBox(placement, t);
      const centre = pixel(sprite, t.x + box.x + box.width / 2, t.y + box.y + box.height / 2);
      assert.ok(isBlue(centre), `storyboard tile ${i}: where a mark would be the picture is ${centre}`);
    }
  });
});
