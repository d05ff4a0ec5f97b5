import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { imageRenders } from '../../lib/outputs/images';
import { waitUntil } from '../playback/helpers';
import { allRenditionsReady, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { cdnGet, launchChromium, outputDir, probeBytes } from './helpers';

/** Frames and canvas width of an animated WebP, read from its RIFF chunks (ffmpeg 5 cannot decode ANMF). */
function webpInfo(buf: Buffer): { frames: number; width: number } {
  assert.equal(buf.toString('ascii', 0, 4), 'RIFF');
  assert.equal(buf.toString('ascii', 8, 12), 'WEBP');
  let frames = 0;
  let width = 0;
  for (let at = 12; at + 8 <= buf.length; ) {
    const fourcc = buf.toString('ascii', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    if (fourcc === 'ANMF') frames++;
    if (fourcc === 'VP8X') width = buf.readUIntLE(at + 8 + 4, 3) + 1;
    at += 8 + size + (size % 2);
  }
  return { frames, width };
}

const PRIV_SECONDS = 3;

describe('Outputs: thumbnails, animated images, static MP4 and storyboard (SPEC §14)', function () {
  this.timeout(120_000);
  let s: Stack;
  let pub: Record<string, any>;
  let priv: Record<string, any>;
  let browser: Browser | undefined;
  const token = async (id: string) => (await s.get(`/v1/playback/${id}`).expect(200)).body.token as string;

  before(async function () {
    this.timeout(300_000);
    s = await startStack();
    // The public video's claims need 12 s (a thumbnail at 11.5 s, a long animated range); the
    // private one only needs a token rule and an audio track, so it is a short clip other files
    // already generate: a quarter of the encoding.
    const [clip, short] = await Promise.all([makeClip({ width: 640, height: 360, seconds: 12 }), makeClip({ width: 640, height: 360, seconds: PRIV_SECONDS })]);
    const [a, b] = await Promise.all([
      uploadFormA(s, clip, { extra: { visibility: 'public', mp4_support: 'capped_1080p' } }),
      uploadFormA(s, short, { extra: { visibility: 'private' } }),
    ]);
    [pub, priv] = await Promise.all([waitForVideo(s, a.id, allRenditionsReady, 240_000), waitForVideo(s, b.id, allRenditionsReady, 240_000)]);
  });
  after(async () => browser?.close());

  describe('thumbnails on demand', () => {
    it('keeps the pipeline poster without a query', async () => {
      const r = await cdnGet(s, `/v/${pub.id}/thumbnail.jpg`).expect(200);
      assert.equal(r.headers['x-render-cache'], undefined);
      assert.equal(r.headers['content-type'], 'image/jpeg');
    });

    it('renders exact sizes per fit_mode and format', async () => {
      const cases: Array<[string, string, number, number]> = [
        ['thumbnail.png?time=2&width=200&height=200&fit_mode=crop', 'png', 200, 200],
        ['thumbnail.jpg?time=2&width=200&height=200&fit_mode=pad', 'mjpeg', 200, 200],
        ['thumbnail.webp?time=2&width=320', 'webp', 320, 180],
        ['thumbnail.jpg?time=2&height=90', 'mjpeg', 160, 90],
        ['thumbnail.png?time=11.5&width=400&height=400', 'png', 400, 225],
      ];
      for (const [q, codec, w, h] of cases) {
        const r = await cdnGet(s, `/v/${pub.id}/${q}`);
        assert.equal(r.status, 200, `${q}: ${r.body.toString().slice(0, 200)}`);
        const info = await probeBytes(r.body, q.split('?')[0].split('.')[1]);
        assert.equal(info.streams[0].codec_name, codec, q);
        assert.deepEqual([info.streams[0].width, info.streams[0].height], [w, h], q);
      }
    });

    it('answers a second identical request from the cache, and renders concurrent ones once', async () => {
      const q = `/v/${pub.id}/thumbnail.jpg?time=3&width=128`;
      const first = await cdnGet(s, q).expect(200);
      assert.equal(first.headers['x-render-cache'], 'miss');
      const before = imageRenders.count;
      const t0 = process.hrtime.bigint();
      const second = await cdnGet(s, q).expect(200);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      assert.equal(second.headers['x-render-cache'], 'hit');
      assert.equal(imageRenders.count, before, 'no ffmpeg run for a cache hit');
      assert.deepEqual(second.body, first.body);
      console.log(`      thumbnail cache hit: ${ms.toFixed(1)} ms (shared, loaded machine)`);

      const fresh = `/v/${pub.id}/thumbnail.png?time=4&width=96`;
      const all = await Promise.all([cdnGet(s, fresh), cdnGet(s, fresh), cdnGet(s, fresh)]);
      assert.deepEqual(all.map((r) => r.status), [200, 200, 200]);
      assert.equal(imageRenders.count, before + 1, 'three concurrent requests, one render');
      assert.deepEqual(all.map((r) => r.headers['x-render-cache']).sort(), ['miss', 'shared', 'shared']);
    });

    it('makes animated GIF and WebP with the right frame count and width', async () => {
      const gif = await cdnGet(s, `/v/${pub.id}/animated.gif?start=1&end=3&fps=10&width=160`).expect(200);
      assert.equal(gif.headers['content-type'], 'image/gif');
      const info = await probeBytes(gif.body, 'gif', true);
      assert.equal(info.streams[0].codec_name, 'gif');
      assert.equal(info.streams[0].width, 160);
      assert.equal(Number(info.streams[0].nb_read_frames), 20);
      const webp = await cdnGet(s, `/v/${pub.id}/animated.webp?start=5&end=6&fps=5&width=200`).expect(200);
      assert.equal(webp.headers['content-type'], 'image/webp');
      assert.deepEqual(webpInfo(webp.body), { frames: 5, width: 200 });
      // Spanning two 6 s segments.
      const across = await cdnGet(s, `/v/${pub.id}/animated.gif?start=4&end=8&fps=2&width=64`).expect(200);
      assert.equal(Number((await probeBytes(across.body, 'gif', true)).streams[0].nb_read_frames), 8);
    });

    it('400 JSON for every bound and bad parameter; time past the end is 400', async () => {
      const bad: Array<[string, string]> = [
        ['thumbnail.jpg?width=1921', 'invalid_parameters'],
        ['thumbnail.jpg?height=1921', 'invalid_parameters'],
        ['thumbnail.jpg?width=0', 'invalid_parameters'],
        ['thumbnail.jpg?width=12.5', 'invalid_parameters'],
        ['thumbnail.jpg?width=abc', 'invalid_parameters'],
        ['thumbnail.png?fit_mode=zoom', 'invalid_parameters'],
        ['thumbnail.jpg?time=-1', 'invalid_parameters'],
        ['thumbnail.jpg?time=12.5', 'time_out_of_range'],
        ['thumbnail.jpg?time=99', 'time_out_of_range'],
        ['thumbnail.jpg?foo=1', 'invalid_parameters'],
        ['animated.gif?start=0&end=10.5', 'invalid_parameters'],
        ['animated.gif?start=1&end=1', 'invalid_parameters'],
        ['animated.gif?start=3&end=2', 'invalid_parameters'],
        ['animated.gif?start=11&end=13', 'time_out_of_range'],
        ['animated.gif?start=12', 'time_out_of_range'],
        ['animated.webp?width=641', 'invalid_parameters'],
        ['animated.webp?fps=31', 'invalid_parameters'],
        ['animated.webp?fps=0', 'invalid_parameters'],
      ];
      for (const [q, code] of bad) {
        const r = await cdnGet(s, `/v/${pub.id}/${q}`);
        assert.equal(r.status, 400, q);
        assert.match(r.headers['content-type'], /json/, q);
        assert.equal(JSON.parse(r.body.toString()).error.code, code, q);
      }
      await cdnGet(s, `/v/${pub.id}/thumbnail.gif?width=10`).expect(404);
    });

    it('follows the CDN rules: a private video needs its token', async () => {
      await cdnGet(s, `/v/${priv.id}/thumbnail.jpg?width=100`).expect(403);
      await cdnGet(s, `/v/${priv.id}/animated.gif?end=1`).expect(403);
      const t = await token(priv.id);
      const r = await cdnGet(s, `/v/${t}/thumbnail.jpg?width=100`).expect(200);
      assert.match(r.headers['cache-control'], /^private/);
    });
  });

  describe('static MP4', () => {
    it('is made after ready from the ladder, and downloads with Content-Disposition and Range', async function () {
      this.timeout(120_000);
      const v = await waitForVideo(s, pub.id, (x) => x.static_renditions[0]?.status === 'ready', 100_000);
      const [st] = v.static_renditions;
      assert.equal(st.name, 'capped_1080p.mp4');
      assert.equal(st.url, `${s.config.cdnUrl}/v/${pub.id}/download/capped_1080p.mp4`);
      const r = await cdnGet(s, `/v/${pub.id}/download/capped_1080p.mp4`).expect(200);
      assert.match(r.headers['content-disposition'], /^attachment; filename="/);
      assert.equal(r.headers['content-type'], 'video/mp4');
      assert.equal(r.body.length, st.size_bytes);
      const info = await probeBytes(r.body, 'mp4');
      const streams = info.streams.map((x) => x.codec_name).sort();
      assert.deepEqual(streams, ['aac', 'h264']);
      assert.equal(info.streams.find((x) => x.codec_type === 'video')!.width, 640);
      assert.ok(Math.abs(Number(info.format.duration) - 12) < 0.2, `duration ${info.format.duration}`);
      // faststart: the moov box comes before mdat.
      assert.ok(r.body.indexOf('moov') < r.body.indexOf('mdat'));
      const part = await cdnGet(s, `/v/${pub.id}/download/capped_1080p.mp4`, { Range: 'bytes=0-99' }).expect(206);
      assert.equal(part.body.length, 100);
      assert.equal(part.headers['content-range'], `bytes 0-99/${st.size_bytes}`);
      assert.deepEqual(part.body, r.body.subarray(0, 100));
    });

    it('PATCH on a ready private video produces audio only (token needed), and none removes it', async function () {
      this.timeout(120_000);
      const p = await s.patch(`/v1/videos/${priv.id}`, { mp4_support: 'audio_only' }).expect(200);
      assert.equal(p.body.mp4_support, 'audio_only');
      const v = await waitForVideo(s, priv.id, (x) => x.static_renditions[0]?.status === 'ready', 100_000);
      assert.equal(v.static_renditions[0].name, 'audio.m4a');
      await cdnGet(s, `/v/${priv.id}/download/audio.m4a`).expect(403);
      const t = await token(priv.id);
      const r = await cdnGet(s, `/v/${t}/download/audio.m4a`).expect(200);
      assert.equal(r.headers['content-type'], 'audio/mp4');
      assert.match(r.headers['content-disposition'], /attachment/);
      const info = await probeBytes(r.body, 'm4a');
      assert.deepEqual(info.streams.map((x) => x.codec_name), ['aac']);
      assert.ok(Math.abs(Number(info.format.duration) - PRIV_SECONDS) < 0.2, `duration ${info.format.duration}`);

      await s.patch(`/v1/videos/${priv.id}`, { mp4_support: 'none' }).expect(200);
      await waitForVideo(s, priv.id, (x) => x.static_renditions.length === 0, 60_000);
      await waitUntil(async () => (await cdnGet(s, `/v/${t}/download/audio.m4a`)).status === 404, 'download gone', 30_000);
      const keys = await s.storage.list(`videos/${s.ws.id}/${priv.uuid}/static/`);
      assert.deepEqual(keys, []);
    });
  });

  describe('storyboard', () => {
    it('has ≥ 1 tile per 10 s and cues that tile the sprite exactly', async function () {
      this.timeout(120_000);
      const v = await waitForVideo(s, pub.id, (x) => x.storyboard_url !== null, 100_000);
      assert.equal(v.storyboard_url, `${s.config.cdnUrl}/v/${pub.id}/storyboard.vtt`);
      const vtt = (await cdnGet(s, `/v/${pub.id}/storyboard.vtt`).expect(200)).body.toString();
      const cues = [...vtt.matchAll(/([\d:.]+) --> ([\d:.]+)\nstoryboard\.jpg#xywh=(\d+),(\d+),(\d+),(\d+)/g)].map((m) => m.slice(3).map(Number));
      assert.equal(cues.length, 12, '12 s at one tile a second');
      const sprite = await cdnGet(s, `/v/${pub.id}/storyboard.jpg`).expect(200);
      const info = await probeBytes(sprite.body, 'jpg');
      const [sw, sh] = [info.streams[0].width, info.streams[0].height];
      assert.deepEqual([sw, sh], [1600, 180], '10 columns × 2 rows of 160×90');
      cues.forEach(([x, y, w, h], i) => {
        assert.deepEqual([x, y, w, h], [(i % 10) * 160, Math.floor(i / 10) * 90, 160, 90]);
        assert.ok(x + w <= sw && y + h <= sh);
      });
    });

    it('Chromium: hovering the seek bar of the embed player shows a preview from the sprite', async function () {
      this.timeout(90_000);
      await waitForVideo(s, pub.id, (x) => x.storyboard_url !== null, 100_000);
      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 640, height: 360 } });
      try {
        await page.goto(`${s.config.playerUrl}/embed/${pub.id}`);
        const bar = await page.waitForSelector('#seekbar', { timeout: 30_000 });
        const box = (await bar.boundingBox())!;
        await page.mouse.move(box.x + box.width * 0.55, box.y + box.height / 2);
        const preview = await page.waitForSelector('#preview:not([hidden])');
        const state = await preview.evaluate((el) => ({ xywh: el.getAttribute('data-xywh'), bg: (el as HTMLElement).style.backgroundImage, w: el.getBoundingClientRect().width }));
        assert.match(state.bg, /storyboard\.jpg/);
        assert.equal(state.xywh, '960,0,160,90', 'the tile of second 6 of 12');
        // The sprite loaded (no broken image): fetch it the way the page does.
        const ok = await page.evaluate(async (u) => (await fetch(u)).ok, state.bg.replace(/^url\("?|"?\)$/g, ''));
        assert.ok(ok);
        fs.mkdirSync(outputDir, { recursive: true });
        await page.screenshot({ path: path.join(outputDir, 'outputs-storyboard-hover.png') });
      } finally {
        await page.close();
      }
    });
  });
});
