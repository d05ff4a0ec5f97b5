import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { isStatus, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TUS_BUNDLE = path.resolve(__dirname, '..', '..', 'node_modules', 'tus-js-client', 'dist', 'tus.min.js');

// A customer's page on ANOTHER origin (localhost:<port> vs the API's 127.0.0.1:<port>) uploads
// straight to upload_url, as SPEC §13 promises: a fetch PUT, and tus-js-client's browser bundle.
for (const driver of ['local', 's3'] as const) {
  describe(`browser uploads from another origin (${driver} storage)`, function () {
    this.timeout(180_000);
    let s: Stack;
    let browser: Browser;
    let site: http.Server;
    let siteOrigin: string;
    let clip: string;
    let page: Page;

    before(async function () {
      this.timeout(240_000);
      [s, clip, browser] = await Promise.all([
        startStack({ storage: driver }),
        makeClip({ width: 320, height: 180, seconds: 2 }),
        chromium.launch({ executablePath: CHROMIUM, args: ARGS }),
      ]);
      site = http.createServer((req, res) => {
        if (req.url === '/tus.js') {
          res.setHeader('Content-Type', 'text/javascript');
          fs.createReadStream(TUS_BUNDLE).pipe(res);
        } else if (req.url === '/clip.mp4') {
          res.setHeader('Content-Type', 'video/mp4');
          fs.createReadStream(clip).pipe(res);
        } else {
          res.setHeader('Content-Type', 'text/html; charset=utf-8');
          res.end('<!doctype html><title>customer app</title><script src="/tus.js"></script>');
        }
      });
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
      siteOrigin = `http://localhost:${(site.address() as AddressInfo).port}`;
      page = await browser.newPage();
      await page.goto(`${siteOrigin}/`);
      assert.notEqual(new URL(s.url).origin, siteOrigin);
    });

    after(async () => {
      await browser?.close();
      site?.close();
    });

    const init = async (extra: Record<string, unknown>) => {
      const r = await s.post('/v1/upload/init', { filename: 'browser.mp4', size: fs.statSync(clip).size, content_type: 'video/mp4', cors_origin: siteOrigin, ...extra });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body as { video_id: string; upload_url: string; upload_headers: Record<string, string> };
    };

    it('a fetch PUT to upload_url, then complete → ready', async () => {
      const v = await init({});
      const result = await page.evaluate(
        async ({ url, headers }) => {
          const blob = await (await fetch('/clip.mp4')).blob();
          const r = await fetch(url, { method: 'PUT', headers, body: blob });
          return { status: r.status, text: await r.text() };
        },
        { url: v.upload_url, headers: v.upload_headers },
      );
      assert.equal(result.status, 200, result.text);
      assert.equal((await s.post('/v1/upload/complete', { video_id: v.video_id })).status, 202);
      await waitForVideo(s, v.video_id, isStatus('ready'));
    });

    it('tus-js-client (browser bundle) with the tus upload_url → ready without a complete call', async () => {
      const v = await init({ upload_protocol: 'tus' });
      // A source string: tsx would wrap named functions in a helper the page does not have.
      const result = await page.evaluate(`(async () => {
        const blob = await (await fetch('/clip.mp4')).blob();
        return await new Promise((resolve) => {
          new window.tus.Upload(blob, {
            uploadUrl: ${JSON.stringify(v.upload_url)},
            chunkSize: 64 * 1024,
            retryDelays: null,
            onSuccess() { resolve('ok'); },
            onError(e) { resolve('error: ' + e.message); },
          }).start();
        });
      })()`);
      assert.equal(result, 'ok');
      await waitForVideo(s, v.video_id, isStatus('ready'));
    });
  });
}
