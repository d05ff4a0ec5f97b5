import assert from 'node:assert/strict';
import { type Browser, chromium } from 'playwright-core';
import { buildDashboard } from '../../lib/dashboard/build';
import { account } from '../dashboard/accounts';
import { type Edge, type LiveStack, startEdge, startLiveStack, waitFor } from './helpers';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// A fake camera (Chromium's test pattern) that getUserMedia grants without asking.
const ARGS = ['--no-sandbox', '--disable-gpu', '--autoplay-policy=no-user-gesture-required', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'];

describe('live: the dashboard goes live from the browser (SPEC §22)', function () {
  this.timeout(240_000);
  let s: LiveStack;
  let edge: Edge;
  let browser: Browser;
  const me = { email: 'live-studio@example.test', password: 'correct horse battery' };
  before(async function () {
    this.timeout(300_000);
    s = await startLiveStack();
    [edge, browser] = await Promise.all([startEdge(s, { LIVE_INGEST_HOST: '0.0.0.0' }), chromium.launch({ executablePath: CHROMIUM, args: ARGS }), buildDashboard()]);
    await account(s, me.email, s.ws.id);
  });
  after(async () => {
    await browser?.close();
    await edge?.stop();
    await s?.close();
  });

  it('shows RTMP, SRT and WHIP beside each other, publishes the camera over WHIP, then shows health and a WHEP preview', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${s.url}/dashboard`);
    await page.getByLabel('Email').fill(me.email);
    await page.getByLabel('Password').fill(me.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Videos' }).waitFor();
    await page.getByRole('navigation').getByRole('link', { name: 'Live', exact: true }).click();
    await page.getByLabel('Title').fill('studio');
    await page.getByRole('button', { name: 'Create live stream' }).click();
    await page.getByTestId('secret').waitFor();
    const studio = page.getByRole('region', { name: 'Live studio' });
    const id = (await studio.getAttribute('data-studio'))!;
    const ls = (await s.get(`/v1/live-streams/${id}`).expect(200)).body;
    for (const [name, url] of [['RTMP', ls.ingest.rtmp_url], ['SRT', ls.ingest.srt_url], ['WHIP', ls.ingest.whip_url]]) {
      assert.equal(await studio.locator(`[data-ingest="${name}"] code`).textContent(), url);
    }
    // The key just shown is already in the studio's form.
    await studio.getByRole('button', { name: 'Go live with the camera' }).click();
    await studio.getByRole('button', { name: /Stop \(live\)/ }).waitFor({ timeout: 30_000 });
    await waitFor('active', async () => (await s.get(`/v1/live-streams/${id}`).expect(200)).body.status === 'active', 90_000);
    await studio.locator('[data-health="whip"]').waitFor({ timeout: 30_000 });
    // The panel appears with the ingest kind first; the codec and size follow with the edge's first health report.
    const health = await waitFor('health with codec and size', async () => {
      const text = (await studio.locator('[data-health]').textContent()) ?? '';
      return /WHIP · h264 \d+×\d+/i.test(text) && text;
    }, 30_000);
    assert.match(health, /WHIP · h264 \d+×\d+/i);
    await page.getByText('Preview · WebRTC (WHEP)').waitFor({ timeout: 30_000 });
    await page.waitForFunction((sel) => ((document.querySelector(sel) as HTMLVideoElement)?.videoWidth ?? 0) > 0, `[data-preview="${id}"]`, { timeout: 30_000 });
    await studio.getByRole('button', { name: /Stop/ }).click();
    await waitFor('disconnected', async () => (await s.get(`/v1/live-streams/${id}`).expect(200)).body.status !== 'active', 30_000);
    assert.deepEqual(errors, []);
  });
});
