import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { chromium, type Browser } from 'playwright-core';
import request from 'supertest';
import { buildDashboard } from '../../lib/dashboard/build';
import { account } from '../dashboard/accounts';
import { startStack, type Stack } from '../support/stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** The Live page's Audience panel (issue 36) in Chromium: viewers now, peak, per-minute series with its table, latency. */
describe('Dashboard: a live stream\'s audience', function () {
  this.timeout(120_000);
  let s: Stack;
  let browser: Browser;
  const me = { email: 'live-audience@example.test', password: 'correct horse battery' };

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ workers: [], env: { ANALYTICS_FLUSH_MS: '100' } });
    [browser] = await Promise.all([chromium.launch({ executablePath: CHROMIUM, args: ARGS }), buildDashboard()]);
    await account(s, me.email, s.ws.id);
  });

  after(async () => {
    await browser?.close();
    await s?.close();
  });

  it('shows viewers now, the peak, a series row for the minute the viewers joined, and the latency', async () => {
    const ls = (await s.post('/v1/live-streams', { title: 'town hall', visibility: 'public' }).expect(201)).body.id as string;
    // Three viewers who joined ten minutes ago, each reporting a latency (2, 3 and 4 s), written
    // as the buffer would have written them then; one minute apart from now, so the peak is theirs.
    const joined = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000 + 5_000);
    await s.db('analytics_events').insert(
      [2000, 3000, 4000].map((latency_ms) => ({ day: joined.toISOString().slice(0, 10), received_at: joined.toISOString(), view_id: randomUUID(), seq: 0, subject_id: ls, event: 'heartbeat', position: 0, latency_ms })),
    );
    // And one watching now, through the beacon endpoint.
    const base = { view_id: randomUUID(), subject: ls, player: { name: 'test' } };
    await request(s.url)
      .post('/v1/beacons')
      .set('Content-Type', 'text/plain')
      .set('User-Agent', UA)
      .send(JSON.stringify([{ ...base, seq: 0, event: 'viewstart', position: 0, elapsed_ms: 0 }, { ...base, seq: 1, event: 'playing', position: 0, elapsed_ms: 500 }]))
      .expect(204);
    await s.app.hot.beacons.flush();

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${s.url}/dashboard/`);
    await page.getByLabel('Email').fill(me.email);
    await page.getByLabel('Password').fill(me.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Live', exact: true }).click();
    const audience = page.getByRole('region', { name: 'Live studio' }).getByRole('region', { name: 'Audience' });
    await audience.waitFor();
    const kpi = (name: string) => audience.locator('.kpi', { hasText: name }).locator('dd').textContent();
    assert.equal(await kpi('Watching now'), '1');
    assert.equal(await kpi('Peak'), '3');
    assert.equal(await kpi('Latency median'), '3.0 s');
    assert.equal(await kpi('Latency p95'), '3.9 s');
    assert.ok(await audience.getByRole('img', { name: 'Concurrent viewers per minute' }).isVisible(), 'the series is a chart with a name');
    // The table fallback has the row of the minute they joined (labelled in the browser's time zone).
    await audience.getByText('Show as table').click();
    const label = await page.evaluate((t) => {
      const d = new Date(t);
      return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
    }, joined.getTime());
    const row = audience.locator('details.chart-table tr', { has: page.locator('td', { hasText: new RegExp(`^${label}$`) }) });
    assert.equal(await row.count(), 1);
    assert.match((await row.textContent()) ?? '', new RegExp(`^${label}\\s*3 viewers$`));
    assert.deepEqual(errors, []);
  });
});
