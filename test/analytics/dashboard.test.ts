import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import request from 'supertest';
import { runRollup } from '../../lib/analytics/rollup';
import { buildDashboard } from '../../lib/dashboard/build';
import { parseVideoId } from '../../lib/ids';
import { account } from '../dashboard/accounts';
import { startStack, type Stack } from '../support/stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SHOTS = path.join(__dirname, '..', '..', 'test-output', 'analytics');

const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
];

/** The Analytics tab and the workspace overview in Chromium, over views sent as beacons. */
describe('Dashboard analytics pages', function () {
  this.timeout(120_000);
  let s: Stack;
  let browser: Browser;
  let page: Page;
  const videos: string[] = [];
  const me = { email: 'analytics-owner@example.test', password: 'correct horse battery' };

  /** `n` views of `id`: startup 300–1500 ms, watched to a spread of positions, some stalls. */
  async function views(id: string, n: number) {
    for (let i = 0; i < n; i++) {
      const view_id = randomUUID();
      const watched = 4 + ((i * 7) % 27);
      const base = { view_id, subject: id, player: { name: 'test' } };
      const events = [
        { ...base, seq: 0, event: 'viewstart', position: 0, elapsed_ms: 0 },
        { ...base, seq: 1, event: 'playing', position: 0, elapsed_ms: 300 + ((i * 97) % 1200), rendition: i % 3 ? '720p' : '360p', bitrate: i % 3 ? 2_500_000 : 800_000, player_height: 720 },
        ...(i % 4 === 0 ? [{ ...base, seq: 2, event: 'rebufferstart', position: 2, elapsed_ms: 3000, watch_ms: 2000 }, { ...base, seq: 3, event: 'rebufferend', position: 2, elapsed_ms: 4200, watch_ms: 2000 }] : []),
        { ...base, seq: 9, event: 'viewend', position: watched, elapsed_ms: watched * 1000 + 2000, watch_ms: watched * 1000 },
      ];
      await request(s.url).post('/v1/beacons').set('Content-Type', 'text/plain').set('User-Agent', AGENTS[i % AGENTS.length]).set('X-Forwarded-For', `10.0.0.${i % 9}`).send(JSON.stringify(events)).expect(204);
    }
  }

  before(async function () {
    this.timeout(240_000);
    fs.mkdirSync(SHOTS, { recursive: true });
    s = await startStack({ workers: [], env: { ANALYTICS_FLUSH_MS: '100', TRUSTED_PROXIES: '127.0.0.1/32' } });
    const [, b] = await Promise.all([buildDashboard(), chromium.launch({ executablePath: CHROMIUM, args: ARGS })]);
    browser = b;
    await account(s, me.email, s.ws.id);
    for (const [title, n] of [['Launch keynote', 24], ['Product tour', 9]] as const) {
      const { body } = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public', title }).expect(201);
      await s.db('videos').where({ id: parseVideoId(body.video_id)! }).update({ duration_seconds: 30 });
      videos.push(body.video_id);
      await views(body.video_id, n);
    }
    await s.app.hot.beacons.flush();
    // What the Schedule does every minute: the overview reads the rollup once it has ever run.
    await runRollup(s.db, { rawDays: 30, lookbackHours: 2 });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(`${s.url}/dashboard/`);
    await page.getByLabel('Email').fill(me.email);
    await page.getByLabel('Password').fill(me.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Sections' }).waitFor();
  });

  after(async () => {
    await browser?.close();
    // Leave the shared database as if the rollup had never run: reads are as of its last run
    // once it has, and the next file's fresh beacons would wait for a run that never comes.
    await s?.db('analytics_rollup_state').delete();
  });

  it('shows the workspace overview: totals, charts with table fallbacks, top videos', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Analytics', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Analytics' }).waitFor();
    const views = page.locator('.kpi', { hasText: 'Views' }).locator('dd');
    await views.first().waitFor();
    assert.equal(await views.first().textContent(), '33');
    // 9 addresses (through a trusted proxy) × 4 agents: 24 people; the 9 who watched the second
    // video also watched the first (the hash is per workspace, not per video).
    assert.equal(await page.locator('.kpi', { hasText: 'Unique viewers' }).locator('dd').textContent(), '24');
    assert.ok(await page.getByRole('img', { name: 'Views' }).isVisible(), 'the chart is an image with a name');
    const rows = page.getByRole('table').filter({ hasText: 'Launch keynote' });
    assert.match((await rows.textContent()) ?? '', /Launch keynote\s*24/);
    assert.ok((await page.locator('details.chart-table').count()) >= 2, 'every chart has its table');
    await page.screenshot({ path: path.join(SHOTS, 'overview.png'), fullPage: true });
  });

  it("shows a video's Analytics tab: retention, startup percentiles, breakdowns", async () => {
    await page.getByRole('link', { name: 'Launch keynote' }).click();
    await page.getByRole('img', { name: /Audience retention/ }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Launch keynote' }).waitFor();
    assert.equal(await page.locator('.kpi', { hasText: 'Views' }).first().locator('dd').textContent(), '24');
    assert.match((await page.locator('.kpi', { hasText: 'Startup p50' }).locator('dd').textContent()) ?? '', /ms|s$/);
    // Experience (issue 36): the score, and the 360p views shown 720 pixels high as upscaling.
    assert.match((await page.locator('.kpi', { hasText: 'Viewer experience score' }).locator('dd').textContent()) ?? '', /^[0-9]{1,3}\.[0-9]$/);
    assert.match((await page.locator('.kpi', { hasText: 'Upscaling' }).locator('dd').textContent()) ?? '', /^[1-9][0-9.]* %$/);
    assert.match((await page.locator('.kpi', { hasText: 'Time-weighted bitrate' }).locator('dd').textContent()) ?? '', /kb\/s$/);
    assert.ok(await page.getByRole('region', { name: 'Browser' }).getByText('Safari').isVisible());
    // Countries (issue 36 item 6): these viewers come from private addresses, so none is known.
    assert.ok(await page.getByRole('region', { name: 'Country' }).getByText('Unknown').isVisible());
    assert.equal(await page.getByRole('navigation', { name: 'Video' }).getByRole('link', { name: 'Analytics' }).getAttribute('aria-current'), 'page');
    await page.getByText('Show as table').last().click();
    await page.screenshot({ path: path.join(SHOTS, 'video-analytics.png'), fullPage: true });
  });
});
