import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { readyVideo } from '../playback/helpers';

// Debian's Chromium, driven by playwright-core (as test/playback/browser.test.ts).
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--autoplay-policy=no-user-gesture-required'];

const LIBS: Record<string, string> = {
  'shaka.js': require.resolve('shaka-player/dist/shaka-player.compiled.js'),
  'video.js': require.resolve('video.js/dist/video.min.js'),
};

/** Pages of a customer's site: an iframe of `src` (optionally without Referer), or a player library on an HLS URL. */
function customerSite(): http.Server {
  return http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const name = u.pathname.slice(1);
    if (LIBS[name]) {
      res.setHeader('Content-Type', 'application/javascript');
      return res.end(fs.readFileSync(LIBS[name]));
    }
    const src = (u.searchParams.get('src') ?? '').replace(/"/g, '&quot;');
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    if (name === 'shaka') {
      return res.end(`<!doctype html><video id="v" muted autoplay width="320"></video><script src="/shaka.js"></script>
        <script>shaka.polyfill.installAll(); const p = new shaka.Player(); p.attach(document.getElementById('v')).then(() => p.load("${src}")).catch((e) => console.error('shaka', e.code));</script>`);
    }
    if (name === 'videojs') {
      return res.end(`<!doctype html><video id="v" class="video-js" muted autoplay width="320"></video><script src="/video.js"></script>
        <script>const p = videojs('v', { html5: { vhs: { overrideNative: true } } }); p.src({ src: "${src}", type: 'application/x-mpegURL' }); p.play();</script>`);
    }
    const policy = u.searchParams.get('noreferrer') ? ' referrerpolicy="no-referrer"' : '';
    res.end(`<!doctype html><iframe src="${src}"${policy} style="width:640px;aspect-ratio:16/9;border:0" allow="autoplay"></iframe>`);
  });
}

describe('Playback protection in a real browser (SPEC §20)', function () {
  this.timeout(120_000);
  let s: Stack;
  let browser: Browser;
  let site: http.Server;
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
      chromium.launch({ executablePath: CHROMIUM, args: ARGS }),
    ]);
    // Two loopback origins for one server: localhost:P is allowed, 127.0.0.1:P is another site.
    const pr = await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['localhost'], allow_no_referrer: true } }).expect(201);
    await s.patch(`/v1/videos/${restricted.id}`, { playback_restriction_id: pr.body.id }).expect(200);
    await s.patch(`/v1/videos/${encrypted.id}`, { encryption: 'aes-128' }).expect(200);
    site = customerSite();
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const port = (site.address() as AddressInfo).port;
    allowedSite = `http://localhost:${port}`;
    otherSite = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    await browser?.close();
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

  async function iframeOf(page: Page): Promise<Frame> {
    const frame = await (await page.waitForSelector('iframe')).contentFrame();
    assert.ok(frame);
    return frame;
  }

  it('an allowed site shows the restricted player and it plays', async () => {
    const { page } = await open(`${allowedSite}/?src=${encodeURIComponent(`${s.config.playerUrl}/embed/${restricted.id}?autoplay=1`)}`);
    try {
      await playing(await iframeOf(page));
    } finally {
      await page.close();
    }
  });

  it('another site cannot show it: refused by Referer, and by frame-ancestors when the Referer is stripped', async () => {
    for (const stripped of [false, true]) {
      const embed = `${s.config.playerUrl}/embed/${restricted.id}?autoplay=1`;
      const page = await browser.newPage();
      const statuses: number[] = [];
      page.on('response', (r) => r.url().startsWith(embed) && statuses.push(r.status()));
      try {
        await page.goto(`${otherSite}/?src=${encodeURIComponent(embed)}${stripped ? '&noreferrer=1' : ''}`);
        const frame = await iframeOf(page);
        await page.waitForTimeout(1500);
        // Without a Referer the server has nothing to refuse (allow_no_referrer): the page is
        // sent, and only the browser's frame-ancestors check keeps it out of the frame.
        assert.deepEqual(statuses, [stripped ? 200 : 403]);
        const state = await frame.evaluate(() => document.body?.dataset.state ?? null).catch(() => null);
        assert.equal(state, null, 'the player page is not shown in the frame');
        assert.equal(await frame.$('video'), null);
      } finally {
        await page.close();
      }
    }
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
