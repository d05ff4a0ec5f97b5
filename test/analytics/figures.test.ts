import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { runRollup } from '../../lib/analytics/rollup';
import { buildDashboard } from '../../lib/dashboard/build';
import { parseVideoId } from '../../lib/ids';
import { account } from '../dashboard/accounts';
import { signIn, VIEWPORTS, watchConsole } from '../dashboard/pages';
import { closeContexts, sharedBrowser } from '../support/chromium';
import { startStack, type Stack } from '../support/stack';

const SHOTS = path.join(__dirname, '..', '..', 'test-output', 'analytics', 'figures');
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** One view as sent: watched `watch` ms at 2 Mb/s, first frame after 500 ms, optionally a stall and a picture shown twice its rendition's height. */
interface Sent {
  subject: string;
  watch: number;
  stall?: number;
  upscaled?: boolean;
}

/**
 * Issue 49, "prove it": known views sent as beacons (two videos and a public live stream, each
 * viewer from an address of their own), and every figure the Analytics pages show — the
 * overview's and a video's tab: KPIs, experience, the top list and the series' table — compared
 * with what those views were, in Chromium at 1366 and 390 px.
 */
describe('Dashboard analytics: every figure on the page is what was sent (issue 49)', function () {
  this.timeout(180_000);
  let s: Stack;
  let browser: Browser;
  const me = { email: 'figures-owner@example.test', password: 'correct horse battery' };
  const ids: Record<string, string> = {};
  const sent: Sent[] = [];

  before(async function () {
    this.timeout(240_000);
    fs.mkdirSync(SHOTS, { recursive: true });
    s = await startStack({ workers: [], env: { TRUSTED_PROXIES: '127.0.0.1/32' } });
    await s.db('analytics_rollup_state').delete();
    [, browser] = await Promise.all([buildDashboard(), sharedBrowser()]);
    await account(s, me.email, s.ws.id);
    for (const title of ['Keynote', 'Tour']) {
      const { body } = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public', title }).expect(201);
      await s.db('videos').where({ id: parseVideoId(body.video_id)! }).update({ duration_seconds: 60 });
      ids[title] = body.video_id;
    }
    ids.live = (await s.post('/v1/live-streams', { title: 'Town hall', visibility: 'public' }).expect(201)).body.id;
    sent.push(
      { subject: ids.Keynote, watch: 30_000 },
      { subject: ids.Keynote, watch: 20_000, stall: 2_000 },
      { subject: ids.Keynote, watch: 10_000, upscaled: true },
      { subject: ids.Keynote, watch: 20_000 },
      { subject: ids.Tour, watch: 12_000 },
      { subject: ids.Tour, watch: 18_000, stall: 3_000 },
      { subject: ids.live, watch: 40_000 },
      { subject: ids.live, watch: 20_000, upscaled: true },
      { subject: ids.live, watch: 10_000 },
    );
    for (const [i, v] of sent.entries()) {
      const base = { view_id: randomUUID(), subject: v.subject, player: { name: 'test' } };
      const r = { rendition: v.upscaled ? '360p' : '720p', bitrate: 2_000_000, player_height: 720 };
      const stall = v.stall ?? 0;
      const events = [
        { ...base, seq: 0, event: 'viewstart', position: 0, elapsed_ms: 0, watch_ms: 0 },
        { ...base, seq: 1, event: 'playing', position: 0, elapsed_ms: 500, watch_ms: 0, ...r },
        ...(stall ? [{ ...base, seq: 2, event: 'rebufferstart', position: 5, elapsed_ms: 5500, watch_ms: 5000, ...r }, { ...base, seq: 3, event: 'rebufferend', position: 5, elapsed_ms: 5500 + stall, watch_ms: 5000, ...r }] : []),
        { ...base, seq: 4, event: 'viewend', position: v.watch / 1000, elapsed_ms: 500 + stall + v.watch, watch_ms: v.watch, ...r },
      ];
      const res = await fetch(`${s.url}/v1/beacons`, { method: 'POST', headers: { 'Content-Type': 'text/plain', 'User-Agent': UA, 'X-Forwarded-For': `198.51.100.${i + 1}` }, body: JSON.stringify(events) });
      assert.equal(res.status, 204);
    }
    await s.app.hot.beacons.flush();
    await runRollup(s.db, { rawDays: 30, lookbackHours: 2 });
  });

  after(async () => {
    await s?.db('analytics_rollup_state').delete();
    await closeContexts(browser);
  });

  // The dashboard's formats (dashboard/src/pages/Analytics.tsx): seconds under a minute, minutes with one decimal under an hour.
  const hms = (sec: number) => (sec >= 3600 ? `${(sec / 3600).toFixed(1)} h` : sec >= 60 ? `${(sec / 60).toFixed(1)} min` : `${sec.toFixed(0)} s`);
  const pct = (v: number) => `${v.toFixed(1)} %`;

  /** What the KPIs and experience figures must read for these views. */
  function expected(views: Sent[]): Record<string, string> {
    const watch = views.reduce((a, v) => a + v.watch, 0);
    const stall = views.reduce((a, v) => a + (v.stall ?? 0), 0);
    const up = views.filter((v) => v.upscaled).reduce((a, v) => a + v.watch, 0);
    // Per view (docs/analytics.md): startup 500 ms scores 1; smoothness (1/√(1+(n/2)²) + e^(−10·stall share)) / 2;
    // quality e^(−0.33 × upscale factor), 720 px for a 360p rendition being a factor of 1.
    const scores = views.map((v) => {
      const share = (v.stall ?? 0) / (v.watch + (v.stall ?? 0));
      const smooth = v.stall ? (1 / Math.sqrt(1 + 0.25) + Math.exp(-10 * share)) / 2 : 1;
      return (100 * (1 + smooth + (v.upscaled ? Math.exp(-0.33) : 1))) / 3;
    });
    const rebuffers = views.filter((v) => v.stall).length;
    return {
      Views: String(views.length),
      'Unique viewers': String(views.length),
      'Watch time': hms(watch / 1000),
      'Average view': hms(watch / 1000 / views.length),
      // Every startup is 500 ms: the histogram's bucket [500, 600) ms, interpolated.
      'Startup p50': '550 ms',
      'Startup p95': '595 ms',
      Rebuffering: pct((100 * stall) / (watch + stall)),
      'Error rate': '0.0 %',
      'Exits before start': '0',
      'Viewer experience score': (scores.reduce((a, b) => a + b, 0) / scores.length).toFixed(1),
      'Startup failures': '0',
      'Playback failures': '0',
      'Rebuffers per minute': (rebuffers / (watch / 60_000)).toFixed(2),
      'Time-weighted bitrate': '2,000 kb/s',
      'Upscaling (time)': pct((100 * up) / watch),
      'Downscaling (time)': '0.0 %',
      'Average upscale': pct((100 * up) / watch),
    };
  }

  async function kpis(page: Page): Promise<Record<string, string>> {
    return Object.fromEntries(await page.locator('.kpi').evaluateAll((els) => els.map((e) => [e.querySelector('dt')!.textContent!.trim(), e.querySelector('dd')!.textContent!.trim()])));
  }

  for (const [name, viewport] of Object.entries(VIEWPORTS)) {
    it(`shows the workspace overview's figures as sent, at ${name} width`, async () => {
      const page = await (await browser.newContext({ viewport })).newPage();
      const errors = watchConsole(page);
      await signIn(page, s.url, me);
      await page.goto(`${s.url}/dashboard/analytics`);
      await page.locator('.kpi').first().waitFor();
      assert.deepEqual(await kpis(page), expected(sent));
      // The top list: the videos and the live stream by views, then the total — adding up.
      const rows = await page.locator('table.top tr[data-top]').evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll("th, td")).map((c) => c.textContent!.trim())));
      const of = (subject: string) => sent.filter((v) => v.subject === subject);
      const line = (title: string, subject: string, kind: string) => [title, String(of(subject).length), hms(of(subject).reduce((a, v) => a + v.watch, 0) / 1000), kind];
      assert.deepEqual(rows, [line('Keynote', ids.Keynote, 'Video'), line('Town hall', ids.live, 'Live stream'), line('Tour', ids.Tour, 'Video'), ['Total', '9', hms(180), '']]);
      // The series: every day of the week, today's bucket marked as still going on and holding every view.
      await page.getByText('Show as table').first().click();
      const today = page.locator('details.chart-table').first().locator('tr[data-partial]');
      assert.match((await today.textContent())!, /\(so far\)9 views$/);
      assert.equal(await page.locator('svg.chart rect.bar').count(), 2 * 8, 'one bar a day, 8 days, in each chart');
      assert.equal(await page.locator('svg.chart rect.bar.partial').count(), 2);
      assert.match((await page.locator('[data-as-of]').textContent())!, /^Figures as of /);
      await page.screenshot({ path: path.join(SHOTS, `overview-${name}.png`), fullPage: true });
      assert.deepEqual(errors, []);
      await page.context().close();
    });
  }

  it("shows a video's figures as sent on its Analytics tab", async () => {
    const page = await (await browser.newContext({ viewport: VIEWPORTS.desktop })).newPage();
    await signIn(page, s.url, me);
    await page.goto(`${s.url}/dashboard/videos/${ids.Keynote}/analytics`);
    await page.locator('.kpi').first().waitFor();
    assert.deepEqual(await kpis(page), expected(sent.filter((v) => v.subject === ids.Keynote)));
    await page.screenshot({ path: path.join(SHOTS, 'video-desktop.png'), fullPage: true });
    await page.context().close();
  });
});
