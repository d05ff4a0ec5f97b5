import assert from 'node:assert/strict';
import type { Browser, Frame, Page } from 'playwright-core';
import { closeContexts, sharedBrowser } from '../support/chromium';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { readyVideo } from '../playback/helpers';
import { assertNotFramed, customerSites, iframeOf } from './site';

describe('Playback protection in a real browser (SPEC §20)', function () {
  this.timeout(120_000);
  let s: Stack;
  let browser: Browser;
  let site: Awaited<ReturnType<typeof customerSites>>;
  let allowedSite: string;
  let otherSite: string;
  let restricted: Awaited<ReturnType<typeof readyVideo>>;
  let encrypted: Awaited<ReturnType<typeof readyVideo>>;

  before(async function () {
    this.timeout(240_000);
    s = await startStack();
    const clip = await makeClip({ width: 320, height: 180, seconds: 4 });
    [restricted, encrypted, browser] = await Promise.all([
      readyVideo(s, clip, 'public'),
      readyVideo(s, clip, 'public'),
      sharedBrowser(),
    ]);
    // Two loopback origins for one server (./site.ts): localhost:P is allowed, 127.0.0.1:P is another site.
    const pr = await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['localhost'], allow_no_referrer: true } }).expect(201);
    await s.patch(`/v1/videos/${restricted.id}`, { playback_restriction_id: pr.body.id }).expect(200);
    await s.patch(`/v1/videos/${encrypted.id}`, { encryption: 'aes-128' }).expect(200);
    site = await customerSites();
    ({ allowed: allowedSite, other: otherSite } = site);
  });

  after(async () => {
    await closeContexts(browser);
    site?.close();
    await s?.close();
  });

  async function open(url: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    return { page, errors };
  }

  const playing = (frame: Frame | Page) =>
    frame.waitForFunction(() => {
      const v = document.querySelector('video') as HTMLVideoElement | null;
      return !!v && v.currentTime > 1 && v.videoWidth === 320;
    }, undefined, { timeout: 40_000 });

  it('an allowed site shows the restricted player and it plays', async () => {
    const { page } = await open(`${allowedSite}/?src=${encodeURIComponent(`${s.config.playerUrl}/embed/${restricted.id}?autoplay=1`)}`);
    try {
      await playing(await iframeOf(page));
    } finally {
      await page.close();
    }
  });

  it('another site cannot show it: refused by Referer, and by frame-ancestors when the Referer is stripped', async () => {
    await assertNotFramed(browser, otherSite, `${s.config.playerUrl}/embed/${restricted.id}?autoplay=1`);
  });

  it('AES-128: the embed player (hls.js) plays an encrypted video on a public id', async () => {
    const { page, errors } = await open(`${allowedSite}/?src=${encodeURIComponent(`${s.config.playerUrl}/embed/${encrypted.id}?autoplay=1`)}`);
    try {
      const frame = await iframeOf(page);
      await playing(frame);
      assert.equal(await frame.evaluate(() => (document.querySelector('video') as HTMLVideoElement).dataset.engine), 'hls.js');
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });

  for (const lib of ['shaka', 'videojs']) {
    it(`AES-128: ${lib} plays the signed hls_url`, async () => {
      const { body } = await s.get(`/v1/playback/${encrypted.id}`).expect(200);
      const { page, errors } = await open(`${allowedSite}/${lib}?src=${encodeURIComponent(body.hls_url)}`);
      try {
        await playing(page).catch((err) => {
          throw new Error(`${lib} did not play: ${err.message}; console: ${errors.join(' | ')}`);
        });
      } finally {
        await page.close();
      }
    });
  }
});
