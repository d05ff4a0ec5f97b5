import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS as ARGS } from '../support/chromium';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { readyVideo } from './helpers';

describe('Player in a real browser', function () {
  this.timeout(120_000);
  let s: Stack;
  let browser: Browser;
  let site: http.Server;
  let siteUrl: string;
  let pub: Awaited<ReturnType<typeof readyVideo>>;
  let priv: Awaited<ReturnType<typeof readyVideo>>;

  before(async function () {
    this.timeout(240_000);
    s = await startStack();
    const clip = await makeClip({ width: 320, height: 180, seconds: 4 });
    [pub, priv, browser] = await Promise.all([
      readyVideo(s, clip, 'public'),
      readyVideo(s, clip, 'private'),
      chromium.launch({ executablePath: CHROMIUM, args: ARGS }),
    ]);
    // Another origin (another port) that embeds the player, as a customer's site would.
    site = http.createServer((req, res) => {
      const src = new URL(req.url ?? '/', 'http://x').searchParams.get('src') ?? '';
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><iframe src="${src.replace(/"/g, '&quot;')}" style="width:640px;aspect-ratio:16/9;border:0" allow="autoplay"></iframe>`);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://localhost:${(site.address() as AddressInfo).port}/`;
  });

  after(async () => {
    await browser?.close();
    site?.close();
  });

  /** Opens the customer page with the player in its iframe; collects console errors of both. */
  async function embedded(url: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${siteUrl}?src=${encodeURIComponent(url)}`);
    return { page, errors };
  }

  async function assertPlays(url: string): Promise<void> {
    const { page, errors } = await embedded(url);
    try {
      const frame = await (await page.waitForSelector('iframe')).contentFrame();
      assert.ok(frame);
      await frame.waitForSelector('video');
      const h264 = await frame.evaluate(() => MediaSource.isTypeSupported('video/mp4; codecs="avc1.42E01E,mp4a.40.2"'));
      assert.ok(h264, 'this Chromium build cannot decode H.264 through MSE; the player cannot be tested here');
      await frame.waitForFunction(() => (document.querySelector('video') as HTMLVideoElement).currentTime > 1, undefined, { timeout: 30_000 });
      const state = await frame.evaluate(() => {
        const v = document.querySelector('video') as HTMLVideoElement;
        return { engine: v.dataset.engine, width: v.videoWidth, height: v.videoHeight, box: v.getBoundingClientRect().width };
      });
      assert.equal(state.engine, 'hls.js');
      assert.deepEqual([state.width, state.height], [320, 180]);
      assert.equal(state.box, 640, 'the player fills its iframe');
      assert.deepEqual(errors, [], 'no console errors (CSP violations show up here)');
    } finally {
      await page.close();
    }
  }

  it('plays a public video', async () => {
    await assertPlays(`${s.config.playerUrl}/embed/${pub.id}?autoplay=1`);
  });

  it('plays a private video through the embed_url from /playback', async () => {
    const { body } = await s.get(`/v1/playback/${priv.id}`);
    await assertPlays(`${body.embed_url}&autoplay=1`);
  });

  it('shows the forbidden message for a private video without a token', async () => {
    const { page } = await embedded(`${s.config.playerUrl}/embed/${priv.id}?autoplay=1`);
    try {
      const frame = await (await page.waitForSelector('iframe')).contentFrame();
      assert.ok(frame);
      const text = await (await frame.waitForSelector('#message')).textContent();
      assert.match(text ?? '', /private/i);
      assert.equal(await frame.$('video'), null);
    } finally {
      await page.close();
    }
  });
});
