import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { type LiveStack, pushRtmp, startLiveStack, waitFor, waitLive } from '../live/helpers';
import { launchChromium } from '../outputs/helpers';
import { assertNotFramed, customerSites, iframeOf } from './site';

/** SPEC §20 on the live embed page in Chromium: frame-ancestors from the stream's allow-list, as browser.test.ts for a video's. */
describe('Live embed protection in a real browser (SPEC §20)', function () {
  this.timeout(150_000);
  let s: LiveStack;
  let browser: Browser;
  let site: Awaited<ReturnType<typeof customerSites>>;

  before(async function () {
    this.timeout(300_000);
    [s, browser, site] = await Promise.all([startLiveStack(), launchChromium(), customerSites()]);
  });
  after(async () => {
    await browser?.close();
    site?.close();
    await s?.close();
  });

  it('an allowed site shows the live player and it plays; another site cannot frame it, with or without a Referer', async () => {
    // localhost:P is the allowed site, 127.0.0.1:P another (./site.ts).
    const pr = (await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['localhost'], allow_no_referrer: true } }).expect(201)).body;
    const ls = (await s.post('/v1/live-streams', { title: 'framed', reconnect_window: 2, playback_restriction_id: pr.id }).expect(201)).body;
    const push = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 90 });
    try {
      await waitLive(s, ls.id);
      await waitFor('the live master playlist', async () => (await request(s.url).get(new URL(ls.hls_url).pathname).set('Referer', `${site.allowed}/`)).status === 200);
      const embed = `${ls.embed_url}?autoplay=1`;
      const page = await browser.newPage();
      try {
        await page.goto(`${site.allowed}/?src=${encodeURIComponent(embed)}`);
        const frame = await iframeOf(page);
        await frame.waitForFunction(() => {
          const v = document.querySelector('video') as HTMLVideoElement | null;
          return !!v && v.currentTime > 1 && v.videoWidth === 320;
        }, undefined, { timeout: 60_000 });
        assert.equal(await frame.evaluate(() => (document.querySelector('video') as HTMLVideoElement).dataset.live ?? null), '1', 'the live player, not the off-air page');
      } finally {
        await page.close();
      }
      await assertNotFramed(browser, site.other, embed);
    } finally {
      await s.post(`/v1/live-streams/${ls.id}/complete`);
      push.stop();
      await push.done;
    }
  });
});
