import assert from 'node:assert/strict';
import { type Browser, type Page } from 'playwright-core';
import { clockFfmpeg, median } from './clock';
import { type Edge, type LiveStack, waitFor, waitLive } from './helpers';
import { browserRig, type ClockSite } from './rig';
import { whepIn } from './whep-page';

// SPEC §22 "Every broadcast plays over WHEP": an RTMP broadcast (ffmpeg, to the edge's own RTMP
// listener, ingest/rtmp) and an SRT one are watched over the API's WHEP endpoint in Chromium, the
// clock the camera paints read back off the decoded picture (test/live/clock.ts).
type Win = Window & { g2g: number[]; clockReads: number[] };

describe('live: every broadcast plays over WHEP (RTMP into the edge, SRT), in Chromium', function () {
  this.timeout(240_000);
  let s: LiveStack;
  let edge: Edge;
  let browser: Browser;
  let site: ClockSite;
  const rig = browserRig({ env: { LIVE_LOW_LATENCY_SEGMENT_SECONDS: '1' } });
  before(() => {
    ({ s, edge, browser, site } = rig);
  });

  /** Waits for the broadcast, watches it over WHEP and returns the glass-to-glass samples once the clock advanced 3 s. */
  async function watch(id: string): Promise<{ g2g: number[]; tab: Page }> {
    await waitLive(s, id);
    const tab = await browser.newPage();
    await tab.goto(`${site.base}/blank`);
    await whepIn(tab, `${s.config.cdnUrl}/live/${id}/whep`);
    await tab.waitForFunction(() => { const r = (window as unknown as Win).clockReads; return r?.length > 30 && r[r.length - 1] - r[0] > 3000; }, undefined, { timeout: 45_000, polling: 250 });
    return { g2g: await tab.evaluate(() => (window as unknown as Win).g2g.slice(-60)), tab };
  }

  // Each source here has AAC audio (and one has B-frames, as OBS sends): WHEP plays the WebRTC
  // rendition the live worker makes for it (lib/live/webrtc.ts, ingest/webrtc/rendition.go).
  for (const [name, proto, extra] of [['RTMP', 'rtmp', []], ['SRT', 'srt', []], ['RTMP with B-frames (OBS-style x264, 2 s GOP)', 'rtmp', ['-bf', '2', '-g', '60']]] as const) {
    it(`an ${name} broadcast (ffmpeg, x264) plays over WHEP: the clock advances, under a second behind`, async () => {
      const ls = (await s.post('/v1/live-streams', { title: `${proto} → whep`, visibility: 'public', latency_mode: 'low', reconnect_window: 0 }).expect(201)).body;
      const out = [...extra, ...(proto === 'rtmp' ? ['-f', 'flv', `${s.rtmpBase}/${ls.stream_key}`] : ['-f', 'mpegts', edge.url(ls.stream_key)])];
      const cam = clockFfmpeg(out, { seconds: 120, gop: 1 });
      try {
        const { g2g, tab } = await watch(ls.id);
        const m = median(g2g);
        if (process.env.LIVE_FIGURES) console.log(`${name} → WHEP glass to glass: median ${m} ms of ${g2g.length} frames`);
        assert.ok(m >= 0 && m < 1000, `${proto} → WHEP median ${m} ms`);
        const health = (await (await fetch(`${edge.httpUrl}/streams/${ls.id}`, { headers: edge.headers })).json()) as { protocol: string; whep_viewers: number; video: { width: number }; webrtc_rendition: boolean };
        assert.deepEqual([health.protocol, health.whep_viewers, health.video.width, health.webrtc_rendition], [proto, 1, 640, true]);
        await tab.close();
      } finally {
        cam.stop();
      }
      await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
      await waitFor('idle', async () => (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.status === 'idle', 60_000);
    });
  }
});
