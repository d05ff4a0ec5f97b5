import assert from 'node:assert/strict';
import request from 'supertest';
import { chromium, type Browser } from 'playwright-core';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { readyVideo } from '../playback/helpers';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--autoplay-policy=no-user-gesture-required'];

// Issue 22 item 12: hls.js probes each caption track with <track src="data:,WEBVTT">; the
// player's CSP refused it, a console error on every load of a video with captions.
describe('security: the player CSP lets hls.js make its caption tracks', function () {
  this.timeout(240_000);
  let s: Stack;
  let browser: Browser;
  let id: string;

  before(async function () {
    s = await startStack();
    const clip = await makeClip({ width: 160, height: 90, seconds: 2 });
    const [v, b] = await Promise.all([readyVideo(s, clip, 'public'), chromium.launch({ executablePath: CHROMIUM, args: ARGS })]);
    browser = b;
    id = v.id;
    await request(s.url)
      .put(`/v1/videos/${id}/captions/en?default=true`) // a default track is shown, so its src is loaded
      .set('Authorization', `Bearer ${s.ws.fullKey}`)
      .set('Content-Type', 'text/vtt')
      .send('WEBVTT\n\n00:00.000 --> 00:01.500\nhello\n')
      .expect(201);
  });

  after(async () => {
    await browser?.close();
  });

  it('loads a captioned video with no CSP violation in the console', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.addInitScript(() => {
        const w = window as unknown as { __csp: string[] };
        w.__csp = [];
        document.addEventListener('securitypolicyviolation', (e) => w.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
      });
      await page.goto(`${s.config.playerUrl}/embed/${id}?autoplay=1`);
      // hls.js adds a <track> per subtitle rendition once it has read the master playlist.
      await page.waitForSelector('video track', { state: 'attached', timeout: 30_000 });
      await page.waitForFunction(() => (document.querySelector('video') as HTMLVideoElement).currentTime > 0.5, undefined, { timeout: 30_000 });
      const violations = await page.evaluate(() => (window as unknown as { __csp?: string[] }).__csp ?? []);
      const tracks = await page.evaluate(() => Array.from(document.querySelectorAll('track')).map((t) => t.src));
      assert.ok(tracks.some((src) => src.startsWith('data:')), `hls.js made its data: track (${tracks.join(', ')})`);
      assert.deepEqual(violations, []);
      // (Chromium's own favicon request may 401; only policy errors count here.)
      assert.deepEqual(errors.filter((e) => /Content Security Policy|Refused to/i.test(e)), []);
    } finally {
      await page.close();
    }
  });
});
