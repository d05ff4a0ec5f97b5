import assert from 'node:assert/strict';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { startStack, type Stack } from '../support/stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe('GET /openapi.json and /docs', function () {
  this.timeout(120_000);
  let s: Stack;
  let browser: Browser;

  before(async () => {
    [s, browser] = await Promise.all([startStack({ workers: [] }), chromium.launch({ executablePath: CHROMIUM, args: ARGS })]);
  });
  after(async () => browser?.close());

  it('serves the document without a key, at every prefix, with the stack\'s own URLs', async () => {
    for (const prefix of ['', '/v1', '/api/v1']) {
      const r = await request(s.url).get(`${prefix}/openapi.json`).expect(200);
      assert.equal(r.body.openapi, '3.1.0');
      assert.equal(r.body.servers[0].url, `${s.url}/v1`);
      assert.ok(r.body.paths['/upload/init'].post);
    }
  });

  it('renders the reference in Chromium from this origin alone: no third-party host, font or telemetry', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const errors: string[] = [];
    page.on('request', (req) => requested.push(req.url()));
    page.on('pageerror', (e) => errors.push(e.message));
    // What the page asks for: its stylesheet and scripts (the `load` event waits for them), the
    // document Swagger UI fetches and renders (one block per operation), and the fonts the rendered
    // page uses (`document.fonts.ready`). Not network silence ('networkidle'): on a loaded machine
    // that waited out its 30 s without saying what was missing.
    await page.goto(`${s.url}/docs`, { waitUntil: 'load' });
    await page.locator('.opblock-summary-path', { hasText: '/upload/init' }).first().waitFor({ timeout: 60_000 });
    await page.locator('.opblock-summary-path', { hasText: '/videos/{id}' }).first().waitFor();
    await page.evaluate(() => document.fonts.ready.then(() => undefined));
    const origin = new URL(s.url).origin;
    const elsewhere = requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:') && !u.startsWith('blob:'));
    assert.deepEqual(elsewhere, [], `requests that left ${origin}`);
    assert.ok(requested.includes(`${origin}/openapi.json`), requested.join('\n'));
    assert.deepEqual(errors, []);
    await page.close();
  });
});
