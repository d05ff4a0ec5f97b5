import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { closeContexts, sharedBrowser } from '../support/chromium';
import { makeClip } from '../support/media';
import { readyVideo } from '../playback/helpers';
import { startStack, type Stack } from '../support/stack';
import { shakaSdkSite } from './site';

/**
 * Issue 36's experience figures from real players in Chromium (the unit of the scores is
 * test/analytics/experience.test.ts, with hand-made beacons): a stream that fails to start, seen
 * by the embed player (hls.js), and a view held at the lowest rendition in a bigger player, seen
 * by Shaka Player with /sdk/analytics.js. Each has a video of its own, so its totals are its own.
 */
describe('Viewer analytics in a real browser: startup failure and a forced low rendition', function () {
  this.timeout(240_000);
  let s: Stack;
  let browser: Browser;
  let site: { url: string; close: () => void };
  let failing: { id: string };
  let low: { id: string };

  before(async function () {
    this.timeout(300_000);
    s = await startStack({ env: { HLS_SEGMENT_SECONDS: '2', ANALYTICS_FLUSH_MS: '200' } });
    const clip = await makeClip({ width: 640, height: 360, seconds: 12, videoBitrate: 600_000 });
    [failing, low, browser] = await Promise.all([readyVideo(s, clip, 'public'), readyVideo(s, clip, 'public'), sharedBrowser()]);
    // A customer's page: Shaka held below 360p, in a 640×360 element.
    site = await shakaSdkSite(s, low.id, {
      style: 'width:640px;height:360px',
      // Held below 360p from its first segment: ABR's choices capped, and ABR off (no switch up later).
      configure: 'player.configure({ abr: { enabled: false, restrictions: { maxHeight: 300 } } });',
      loaded: `window.lowestHeight = player.getVariantTracks().find((t) => t.active).height;
    window.heights = player.getVariantTracks().map((t) => t.height);`,
    });
  });

  after(async () => {
    await closeContexts(browser);
    site?.close();
  });

  /** Polls a video's analytics totals until `ok` holds, for at most 90 s. */
  async function totalsWhen(id: string, ok: (t: Record<string, number>) => boolean): Promise<Record<string, number>> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { body } = await s.get(`/v1/videos/${id}/analytics`).expect(200);
      if (ok(body.totals)) return body.totals;
      assert.ok(Date.now() < deadline, `analytics within 90 s: ${JSON.stringify(body.totals)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  it('a stream that fails to start (its master playlist refused) is a startup failure, not an exit before start', async () => {
    const page = await browser.newPage();
    try {
      let refused = 0;
      await page.route(/\/master\.m3u8(\?|$)/, async (route) => {
        refused++;
        await route.fulfill({ status: 404, body: 'gone' });
      });
      await page.goto(`${s.config.playerUrl}/embed/${failing.id}?autoplay=1&muted=1`);
      // The embed player's beacons arrive: the view, then its error.
      await totalsWhen(failing.id, (t) => t.views >= 1 && t.startup_failures >= 1);
      assert.ok(refused >= 1, 'the player asked for the master playlist');
    } finally {
      await page.goto('about:blank').catch(() => undefined);
      await page.close();
    }
    const t = await totalsWhen(failing.id, (x) => x.startup_failures >= 1);
    assert.equal(t.views, 1);
    assert.equal(t.startup_failures, 1);
    assert.equal(t.exits_before_start, 0, 'a failure, not an exit');
    assert.equal(t.playback_failures, 0);
    assert.equal(t.watch_time_seconds, 0);
  });

  it('a view held at the lowest rendition in a bigger player shows as upscaled, at that rendition\u2019s bitrate, scored below 100', async () => {
    const page = await browser.newPage();
    let heights: number[] = [];
    let lowest = 0;
    try {
      await page.goto(site.url);
      await page.waitForFunction(() => (document.querySelector('video') as HTMLVideoElement).currentTime > 6 || document.title.startsWith('error'), undefined, { timeout: 90_000, polling: 250 });
      assert.doesNotMatch(await page.title(), /^error/);
      [heights, lowest] = await page.evaluate(() => [(window as unknown as { heights: number[] }).heights, (window as unknown as { lowestHeight: number }).lowestHeight]);
      assert.ok(lowest < 360 && heights.some((h) => h >= 360), `variants ${heights.join(', ')}: one below the 360-pixel player`);
    } finally {
      // Leaving sends the viewend (sendBeacon).
      await page.goto('about:blank').catch(() => undefined);
      await page.close();
    }
    const t = await totalsWhen(low.id, (x) => x.views >= 1 && x.watch_time_seconds >= 5 && x.upscale_percentage > 0);
    assert.equal(t.views, 1);
    assert.equal(t.startup_failures + t.playback_failures, 0);
    // Upscaling is measured as Mux Data measures it: how much bigger the picture is shown than
    // it is (360 / 240 − 1 = 50 %), weighted by the time it was shown so (all of this view).
    const expected = 100 * (360 / lowest - 1);
    assert.ok(Math.abs(t.upscale_amount_percentage - expected) <= 2, `upscaling ${t.upscale_amount_percentage} %, expected ${expected} % (${lowest}p shown 360 pixels high)`);
    // And as a share of time (issue 49): all of this view's playback was upscaled.
    assert.ok(t.upscale_percentage > 95 && t.upscale_percentage <= 100, `upscaled ${t.upscale_percentage} % of the time`);
    assert.equal(t.downscale_percentage, 0);
    assert.ok(t.viewer_experience_score > 0 && t.viewer_experience_score < 100, `score ${t.viewer_experience_score}`);
    // The time-weighted bitrate is the lowest variant's (video + audio), under the 360p one's.
    const master = await (await fetch(`${s.config.cdnUrl}/v/${low.id}/master.m3u8`)).text();
    const bandwidths = [...master.matchAll(/BANDWIDTH=(\d+)[^\n]*RESOLUTION=\d+x(\d+)/g)].map((m) => ({ bw: Number(m[1]), h: Number(m[2]) }));
    const atLowest = bandwidths.find((b) => b.h === lowest)!.bw / 1000;
    const above = Math.min(...bandwidths.filter((b) => b.h > lowest).map((b) => b.bw)) / 1000;
    assert.ok(Math.abs(t.time_weighted_bitrate_kbps - atLowest) <= atLowest * 0.25 && t.time_weighted_bitrate_kbps < above, `bitrate ${t.time_weighted_bitrate_kbps} kb/s; variants ${atLowest} and ${above}`);
  });
});
