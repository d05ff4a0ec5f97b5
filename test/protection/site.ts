import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Frame, Page } from 'playwright-core';

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

/**
 * The customer's site on two loopback origins of one server: `allowed` is `http://localhost:P`
 * (a restriction listing `localhost` allows it), `other` is `http://127.0.0.1:P`, another site.
 */
export async function customerSites(): Promise<{ allowed: string; other: string; close: () => void }> {
  const site = customerSite();
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const port = (site.address() as AddressInfo).port;
  return { allowed: `http://localhost:${port}`, other: `http://127.0.0.1:${port}`, close: () => site.close() };
}

export async function iframeOf(page: Page): Promise<Frame> {
  const frame = await (await page.waitForSelector('iframe')).contentFrame();
  assert.ok(frame);
  return frame;
}

/**
 * `embed` framed by a page of `otherSite`, with its Referer (refused by the server, 403) and with
 * it stripped (sent, 200, under `allow_no_referrer`): either way the frame shows no player, the
 * second only because the browser enforces the page's `frame-ancestors`.
 */
export async function assertNotFramed(browser: Browser, otherSite: string, embed: string): Promise<void> {
  for (const stripped of [false, true]) {
    const page = await browser.newPage();
    const statuses: number[] = [];
    page.on('response', (r) => r.url().startsWith(embed) && statuses.push(r.status()));
    try {
      const answered = page.waitForResponse((r) => r.url().startsWith(embed));
      // goto waits for the page's load event, which waits for its frame's document (or the error
      // page the browser puts there when frame-ancestors refuses it); the player page is server-
      // rendered (its <body data-state> and <video> are in the HTML), so nothing is left to wait for.
      await page.goto(`${otherSite}/?src=${encodeURIComponent(embed)}${stripped ? '&noreferrer=1' : ''}`);
      const frame = await iframeOf(page);
      await answered;
      // Without a Referer the server has nothing to refuse (allow_no_referrer): the page is
      // sent, and only the browser's frame-ancestors check keeps it out of the frame.
      assert.deepEqual(statuses, [stripped ? 200 : 403], `${embed} framed by ${otherSite}${stripped ? ' without a Referer' : ''}`);
      const state = await frame.evaluate(() => document.body?.dataset.state ?? null).catch(() => null);
      assert.equal(state, null, 'the player page is not shown in the frame');
      assert.equal(await frame.$('video'), null);
    } finally {
      await page.close();
    }
  }
}
