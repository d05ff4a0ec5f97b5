import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { closeContexts, sharedBrowser } from '../support/chromium';
import { makeClip } from '../support/media';
import { readyVideo } from '../playback/helpers';
import { startStack, type Stack } from '../support/stack';
import { shakaSdkSite } from './site';

/**
 * SPEC §18 end to end: real players in Chromium on a network throttled through the DevTools
 * protocol to below the video's bitrate, so playback must stall; the views, watch time,
 * startup time and rebuffering then show in the API within 60 s.
 */
describe('Viewer analytics in a real browser (embed player, Shaka + SDK)', function () {
  this.timeout(240_000);
  let s: Stack;
  let browser: Browser;
  let site: { url: string; close: () => void };
  let siteUrl: string;
  let video: { id: string; uuid: string };
  let bytesPerSecond: number;

  before(async function () {
    this.timeout(300_000);
    s = await startStack({ env: { HLS_SEGMENT_SECONDS: '2', ANALYTICS_FLUSH_MS: '200' } });
    const clip = await makeClip({ width: 320, height: 180, seconds: 12, content: 'noise', videoBitrate: 300_000 });
    [video, browser] = await Promise.all([readyVideo(s, clip, 'public'), sharedBrowser()]);
    // The media's own rate: throttling below it forces a stall whatever the machine's speed.
    const master = await (await fetch(`${s.config.cdnUrl}/v/${video.id}/master.m3u8`)).text();
    // The first variant stream's playlist (a master may also list audio-only renditions).
    const lines = master.split('\n');
    const variant = lines[lines.findIndex((l) => l.startsWith('#EXT-X-STREAM-INF')) + 1];
    const media = new URL(variant, `${s.config.cdnUrl}/v/${video.id}/master.m3u8`);
    const playlist = await (await fetch(media)).text();
    const segs = playlist.split('\n').filter((l) => l && !l.startsWith('#'));
    const sizes = await Promise.all(segs.map(async (u) => (await (await fetch(new URL(u, media))).arrayBuffer()).byteLength));
    bytesPerSecond = sizes.reduce((a, b) => a + b, 0) / 12;
    // A customer's page on another origin with Shaka Player and the SDK from {base_url}/sdk/analytics.js.
    site = await shakaSdkSite(s, video.id, { style: 'width:320px' });
    siteUrl = site.url;
  });

  after(async () => {
    await closeContexts(browser);
    site?.close();
  });

  /**
   * Plays `url` on a network at 45 % of the media's rate until it has stalled and played on, then
   * leaves the page. The page and the player's code load at full speed: the network is throttled
   * from the player's first request for the media (its master playlist) on. Throttled from the
   * start, the player libraries alone (hls.js, Shaka: hundreds of KB) took 33 s and 42 s to arrive,
   * which proved nothing about the media.
   */
  async function playThrottled(url: string): Promise<void> {
    const page: Page = await browser.newPage();
    try {
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.enable');
      let throttledAt = 0;
      // The master playlist waits until the throttle is on; every request after it goes through it.
      await page.route(
        /\/master\.m3u8(\?|$)/,
        async (route) => {
          await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 50, downloadThroughput: Math.round(bytesPerSecond * 0.45), uploadThroughput: -1 });
          throttledAt = Date.now();
          await route.continue();
        },
        { times: 1 },
      );
      await page.goto(url, { waitUntil: 'commit' });
      const frame = page.mainFrame();
      const h264 = await frame.evaluate(() => MediaSource.isTypeSupported('video/mp4; codecs="avc1.42E01E,mp4a.40.2"'));
      assert.ok(h264, 'this Chromium build cannot decode H.264 through MSE');
      // Past the first segments: at 45 % of the media rate it has had to wait for data.
      await frame.waitForFunction(() => {
        const v = document.querySelector('video') as HTMLVideoElement | null;
        return v !== null && v.currentTime > 4.5;
      }, undefined, { timeout: 90_000, polling: 250 });
      assert.ok(throttledAt > 0, 'the media was loaded through the throttled network');
    } finally {
      // Leaving fires pagehide: the viewend goes out with sendBeacon.
      await page.goto('about:blank').catch(() => undefined);
      await page.close();
    }
  }

  /** Polls the video's analytics until `ok` holds, for at most 60 s. */
  async function analyticsWhen(ok: (t: Record<string, number>) => boolean): Promise<Record<string, number>> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { body } = await s.get(`/v1/videos/${video.id}/analytics`).expect(200);
      if (ok(body.totals)) return body.totals;
      assert.ok(Date.now() < deadline, `analytics within 60 s: ${JSON.stringify(body.totals)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  it('counts a throttled view through the embed player: startup, watch time, rebuffering', async () => {
    await playThrottled(`${s.config.playerUrl}/embed/${video.id}?autoplay=1&muted=1`);
    const t = await analyticsWhen((x) => x.views >= 1 && x.rebuffer_count >= 1 && x.watch_time_seconds >= 4);
    assert.equal(t.views, 1);
    assert.ok(t.startup_time_p50_ms! > 0, `startup ${t.startup_time_p50_ms}`);
    assert.ok(t.rebuffer_seconds > 0 && t.rebuffer_percentage > 0);
    const { rows } = await s.db.raw(`select player from analytics_events where event = 'viewstart' and subject_id = ?`, [video.uuid]);
    assert.match(rows[0].player, /^vidhost-embed/);
    // sendBeacon delivers after the page is gone, on the throttled network: give it its time.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ends = await s.db.raw(`select count(*)::int as n from analytics_events where event = 'viewend' and subject_id = ?`, [video.uuid]);
      if (ends.rows[0].n === 1) break;
      assert.ok(Date.now() < deadline, 'viewend sent on pagehide');
      await new Promise((r) => setTimeout(r, 300));
    }
  });

  it('counts a throttled view through Shaka Player with /sdk/analytics.js', async () => {
    await playThrottled(siteUrl);
    const t = await analyticsWhen((x) => x.views >= 2 && x.rebuffer_count >= 2 && x.watch_time_seconds >= 8);
    assert.equal(t.views, 2);
    const { rows } = await s.db.raw(`select player from analytics_events where event = 'viewstart' and subject_id = ? order by received_at`, [video.uuid]);
    assert.match(rows[1].player, /^shaka-player/);
    const r = await s.db.raw(`select count(*)::int as n from analytics_events where subject_id = ? and rendition is not null`, [video.uuid]);
    assert.ok(r.rows[0].n > 0, 'renditions reported');
  });
});
