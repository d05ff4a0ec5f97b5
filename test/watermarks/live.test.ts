import assert from 'node:assert/strict';
import request from 'supertest';
import { type Browser, type Page } from 'playwright-core';
import { markBox } from '../../lib/media/watermark';
import { clockFfmpeg, median } from '../live/clock';
import { type Edge, type LiveStack, waitFor, waitLive } from '../live/helpers';
import { browserRig, type ClockSite } from '../live/rig';
import { whepIn } from '../live/whep-page';
import { decodeFrame, isMagenta, pixel, type Frame } from './frames';
import { solidImage } from './images';

// SPEC §24 for live streams: a stream's mark (its own watermark_id, or the workspace default) is
// burnt into every rendition of the live ladder (so LL-HLS, which tees the same encodes), the
// recording made of them, and the WebRTC rendition WHEP viewers get. Real ffmpeg RTMP into the
// edge, real Temporal, Chromium as the WHEP viewer; the mark found by its colour at markBox.
const placement = { position: 'bottom-right' as const, padding: 0.05, scale: 0.15, width: 64, height: 32 };
const uris = (playlist: string) => playlist.split('\n').filter((l) => l && !l.startsWith('#'));
type Win = Window & { g2g: number[]; clockReads: number[] };

/** The mark's centre is magenta; left of the box, the clock camera's gray is not. */
function assertMarked(f: Frame, what: string): void {
  const box = markBox(placement, f);
  const centre = pixel(f, box.x + box.width / 2, box.y + box.height / 2);
  assert.ok(isMagenta(centre), `${what} (${f.width}×${f.height}): the mark's centre at ${JSON.stringify(box)} is ${centre}`);
  const beside = pixel(f, box.x - box.width / 2, box.y + box.height / 2);
  assert.ok(!isMagenta(beside), `${what}: beside the mark the picture is ${beside}`);
}
function assertUnmarked(f: Frame, what: string): void {
  const box = markBox(placement, f);
  const centre = pixel(f, box.x + box.width / 2, box.y + box.height / 2);
  assert.ok(!isMagenta(centre), `${what}: where a mark would be the picture is ${centre}`);
}

async function bytes(url: string | URL): Promise<Buffer> {
  const res = await fetch(url);
  assert.equal(res.status, 200, String(url));
  return Buffer.from(await res.arrayBuffer());
}

/** The last segment (or the first, for a finished recording) of each rung's HLS playlist, decoded. */
async function renditionFrames(hlsUrl: string, rungs: string[], which: 'first' | 'last'): Promise<Array<{ name: string; frame: Frame }>> {
  const out: Array<{ name: string; frame: Frame }> = [];
  for (const rung of rungs) {
    const playlistUrl = new URL(`${rung}/index.m3u8`, hlsUrl);
    const segments = uris(await (await fetch(playlistUrl)).text());
    const seg = which === 'first' ? segments[0] : segments[segments.length - 1];
    out.push({ name: `${rung}/${seg}`, frame: await decodeFrame(await bytes(new URL(seg, playlistUrl)), 'ts') });
  }
  return out;
}

/** The newest full LL-HLS segment of every variant of the low-latency master (`ll/…`), its init prepended, decoded. */
async function llhlsFrames(hlsUrl: string): Promise<Array<{ name: string; frame: Frame }>> {
  const master = await (await fetch(hlsUrl)).text();
  const out: Array<{ name: string; frame: Frame }> = [];
  for (const variant of uris(master).filter((u) => u.startsWith('ll/') && /video/.test(u))) {
    const playlistUrl = new URL(variant, hlsUrl);
    const media = await (await fetch(playlistUrl)).text();
    const init = /#EXT-X-MAP:URI="([^"]+)"/.exec(media)?.[1];
    const segments = uris(media);
    assert.ok(init && segments.length, `${variant}: ${media.slice(0, 300)}`);
    const body = Buffer.concat([await bytes(new URL(init, playlistUrl)), await bytes(new URL(segments[segments.length - 1], playlistUrl))]);
    out.push({ name: variant, frame: await decodeFrame(body, 'mp4') });
  }
  return out;
}

/** The WHEP picture in the page: its size and the pixel at (x, y) of a frame drawn at that size. */
async function whepPixel(tab: Page, at: (f: { width: number; height: number }) => { x: number; y: number }): Promise<{ width: number; height: number; rgb: number[] }> {
  const size = await tab.evaluate(() => { const v = document.getElementById('v') as HTMLVideoElement; return { width: v.videoWidth, height: v.videoHeight }; });
  const p = at(size);
  const rgb = await tab.evaluate(({ x, y }) => {
    const v = document.getElementById('v') as HTMLVideoElement;
    const c = document.createElement('canvas');
    c.width = v.videoWidth;
    c.height = v.videoHeight;
    const ctx = c.getContext('2d')!;
    ctx.drawImage(v, 0, 0);
    return Array.from(ctx.getImageData(Math.round(x), Math.round(y), 1, 1).data.slice(0, 3));
  }, p);
  return { ...size, rgb };
}

describe('watermarks on live streams: every rendition, the recording and WHEP (SPEC §24)', function () {
  this.timeout(300_000);
  let s: LiveStack;
  let edge: Edge;
  let browser: Browser;
  let site: ClockSite;
  let wmId: string;
  const rig = browserRig({ env: { LIVE_LOW_LATENCY_SEGMENT_SECONDS: '1' } });
  before(() => {
    ({ s, edge, browser, site } = rig);
  });
  before(async () => {
    const wm = await request(s.url).post('/v1/watermarks?position=bottom-right&padding=0.05&scale=0.15').set('Authorization', `Bearer ${s.ws.fullKey}`)
      .set('Content-Type', 'image/png').send(await solidImage('magenta', 64, 32)).expect(201);
    wmId = wm.body.id;
  });

  it('watermark_id on POST /v1/live-streams: its own, the workspace default, none, and a foreign id refused', async () => {
    const own = (await s.post('/v1/live-streams', { title: 'own', watermark_id: wmId }).expect(201)).body;
    assert.equal(own.watermark_id, wmId);
    assert.equal((await s.get(`/v1/live-streams/${own.id}`).expect(200)).body.watermark_id, wmId);
    await s.patch('/v1/watermark-defaults', { default_watermark_id: wmId }).expect(200);
    try {
      assert.equal((await s.post('/v1/live-streams', { title: 'default' }).expect(201)).body.watermark_id, wmId);
      assert.equal((await s.post('/v1/live-streams', { title: 'none', watermark_id: null }).expect(201)).body.watermark_id, null);
    } finally {
      await s.patch('/v1/watermark-defaults', { default_watermark_id: null }).expect(200);
    }
    assert.equal((await s.post('/v1/live-streams', { title: 'plain' }).expect(201)).body.watermark_id, null);
    const bad = await s.post('/v1/live-streams', { title: 'bad', watermark_id: 'wm_00000000000000000000000000000000' }).expect(400);
    assert.equal(bad.body.error.code, 'invalid_watermark_id');
  });

  for (const marked of [true, false]) {
    it(marked ? 'a marked RTMP broadcast: the mark in every HLS rendition, over WHEP in Chromium, and in the recording' : 'an unmarked broadcast has no mark anywhere', async () => {
      const ls = (await s.post('/v1/live-streams', { title: marked ? 'marked' : 'plain', visibility: 'public', latency_mode: 'low', reconnect_window: 0, new_video_settings: { visibility: 'public' }, watermark_id: marked ? wmId : null }).expect(201)).body;
      const cam = clockFfmpeg(['-f', 'flv', `${s.rtmpBase}/${ls.stream_key}`], { seconds: 150, gop: 1 });
      let recording = '';
      let rungs: string[] = [];
      try {
        const active = await waitLive(s, ls.id);
        recording = active.active_video_id;
        // A few segments in: the ladder's newest segment of each rung, and LL-HLS (the same encodes, packaged by the edge).
        await new Promise((r) => setTimeout(r, 3000));
        rungs = ((await s.get(`/v1/videos/${recording}`).expect(200)).body.renditions as Array<{ name: string }>).map((r) => r.name);
        assert.ok(rungs.length >= 2, `rungs: ${rungs}`);
        assert.equal(rungs.includes('source'), !marked, 'a marked stream has no passthrough rung');
        const live = [...(await renditionFrames(ls.hls_url, rungs, 'last')), ...(await llhlsFrames(ls.hls_url))];
        assert.ok(live.length >= 2 * rungs.length, `decoded: ${live.map((x) => x.name)}`);
        for (const { name, frame } of live) (marked ? assertMarked : assertUnmarked)(frame, `live ${name}`);

        // WHEP in Chromium: the decoded picture carries the mark at the same place.
        const tab = await browser.newPage();
        await tab.goto(`${site.base}/blank`);
        await whepIn(tab, `${s.config.cdnUrl}/live/${ls.id}/whep`);
        await tab.waitForFunction(() => { const r = (window as unknown as Win).clockReads; return r?.length > 30 && r[r.length - 1] - r[0] > 3000; }, undefined, { timeout: 45_000, polling: 250 });
        const g2g = await tab.evaluate(() => (window as unknown as Win).g2g.slice(-60));
        if (process.env.LIVE_FIGURES) console.log(`${marked ? 'marked' : 'unmarked'} RTMP → WHEP glass to glass: median ${median(g2g)} ms of ${g2g.length} frames`);
        const centre = await whepPixel(tab, (f) => { const b = markBox(placement, f); return { x: b.x + b.width / 2, y: b.y + b.height / 2 }; });
        const beside = await whepPixel(tab, (f) => { const b = markBox(placement, f); return { x: b.x - b.width / 2, y: b.y + b.height / 2 }; });
        assert.equal(isMagenta(centre.rgb), marked, `WHEP ${centre.width}×${centre.height}: the mark's centre is ${centre.rgb}`);
        assert.ok(!isMagenta(beside.rgb), `WHEP: beside the mark ${beside.rgb}`);
        const health = (await (await fetch(`${edge.httpUrl}/streams/${ls.id}`, { headers: edge.headers })).json()) as { whep_viewers: number; webrtc_rendition: boolean };
        assert.deepEqual([health.whep_viewers, health.webrtc_rendition], [1, true]);
        await tab.close();
      } finally {
        cam.stop();
        // Ended whatever happened: the plan allows one broadcast at a time.
        await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
      }
      const video = await waitFor('recording ready', async () => { const v = (await s.get(`/v1/videos/${recording}`).expect(200)).body; return v.status === 'ready' && v; }, 90_000);
      const recorded = await renditionFrames(video.hls_url, rungs, 'first');
      for (const { name, frame } of recorded) (marked ? assertMarked : assertUnmarked)(frame, `recording ${name}`);
    });
  }
});
