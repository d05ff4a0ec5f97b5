import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { buildDashboard } from '../../lib/dashboard/build';
import { runRollup } from '../../lib/analytics/rollup';
import { closeContexts, sharedBrowser } from '../support/chromium';
import { makeClip } from '../support/media';
import { readyVideo, waitUntil } from '../playback/helpers';
import { audioSource } from '../audio/media';
import { settled, upload } from '../audio/helpers';
import { type LiveStack, pushRtmp, startLiveStack, waitFor } from '../live/helpers';
import { solidImage } from '../watermarks/images';
import { account } from './accounts';
import { signIn, VIEWPORTS, watchConsole } from './pages';

const SHOTS = path.join(__dirname, '..', '..', 'test-output', 'dashboard', 'pages');

/**
 * Issue 49 as a new user met it, in Chromium at 1366 px and at 390 px (a phone): every dashboard
 * page fits the width without sideways scrolling and logs no console error (the favicon
 * included), with a screenshot of each page at each width in test-output/dashboard/pages/; and
 * each item that person hit, on the real stack with a live broadcast on air.
 */
describe('Dashboard: every page at 1366 and 390 px (issue 49)', function () {
  this.timeout(300_000);
  let s: LiveStack;
  let browser: Browser;
  const ctxs: Record<string, BrowserContext> = {};
  const me = { email: 'pages-owner@example.test', password: 'correct horse battery' };
  const ids: Record<string, string> = {};
  let push: ReturnType<typeof pushRtmp> | undefined;

  before(async function () {
    this.timeout(300_000);
    fs.mkdirSync(SHOTS, { recursive: true });
    s = await startLiveStack();
    const [, clip, b, mp3] = await Promise.all([buildDashboard(), makeClip({ width: 320, height: 180, seconds: 4 }), sharedBrowser(), audioSource('mp3')]);
    browser = b;
    await account(s, me.email, s.ws.id);
    // A second workspace of the same person, with nothing in it yet.
    const fresh = await s.newWorkspace();
    const person = await s.db('people').where({ email: me.email }).first('id');
    await s.db('memberships').insert({ person_id: person.id, workspace_id: fresh.id, role: 'owner' });
    ids.fresh = fresh.id;

    const [pub, priv, audio] = await Promise.all([readyVideo(s, clip, 'public'), readyVideo(s, clip, 'private'), upload(s, mp3, { title: 'podcast episode' }).then((id) => settled(s, id))]);
    ids.pub = pub.id;
    ids.priv = priv.id;
    ids.audio = audio.id;
    await s.patch(`/v1/videos/${pub.id}`, { title: 'Launch keynote' }).expect(200);
    await s.patch(`/v1/videos/${priv.id}`, { title: 'Board meeting' }).expect(200);
    ids.waiting = (await s.post('/v1/upload/init', { filename: 'w.mp4', size: 1000, content_type: 'video/mp4', title: 'Still uploading' }).expect(201)).body.video_id;

    // A private live stream restricted to one site, on air from an RTMP encoder.
    const restriction = (await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['shop.example'], allow_no_referrer: false } }).expect(201)).body;
    const ls = (await s.post('/v1/live-streams', { title: 'Town hall', visibility: 'private', playback_restriction_id: restriction.id }).expect(201)).body;
    ids.ls = ls.id;
    ids.lsKey = ls.stream_key;
    await s.post('/v1/live-streams', { title: 'Weekly show with a rather long title for the table' }).expect(201);
    await s.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', description: 'receiver' }).expect(201);
    // A watermark profile, so the Watermarks page shows a row with its image and the pickers a choice.
    await request(s.url).post('/v1/watermarks?name=Channel%20logo').set('Authorization', `Bearer ${s.ws.fullKey}`).set('Content-Type', 'image/png').send(await solidImage('magenta', 64, 32)).expect(201);
    // Long enough for the slowest run (stopped in after()): at 240 s it had ended before the Live tests under CI's load.
    push = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 900 });
    await waitFor('on air', async () => (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.status === 'active', 90_000);
    await waitFor('a recording', async () => (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.recent_video_ids.length > 0, 60_000);

    // Views, so the analytics pages draw their charts.
    for (const [subject, n] of [[pub.id, 3], [ls.id, 2]] as const) {
      for (let i = 0; i < n; i++) {
        const view = { view_id: crypto.randomUUID(), subject, player: { name: 'test' } };
        const body = [
          { ...view, seq: 0, event: 'viewstart', position: 0, elapsed_ms: 0, watch_ms: 0 },
          { ...view, seq: 1, event: 'playing', position: 0, elapsed_ms: 500, watch_ms: 0, rendition: '180p', player_height: 360 },
          { ...view, seq: 2, event: 'viewend', position: 3, elapsed_ms: 3500, watch_ms: 3000, rendition: '180p', player_height: 360 },
        ];
        await fetch(`${s.url}/v1/beacons`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify(body) });
      }
    }
    await s.app.hot.beacons.flush();
    await runRollup(s.db, { rawDays: 30, lookbackHours: 2 });

    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      ctxs[name] = await browser.newContext({ viewport, ...(viewport.width < 500 ? { isMobile: true, hasTouch: true } : {}) });
      await signIn(await ctxs[name].newPage(), s.url, me).then((p) => p.close());
    }
  });

  after(async () => {
    push?.stop();
    await s?.db('analytics_rollup_state').delete();
    await closeContexts(browser);
    await s?.close();
  });

  const pages = () => [
    ['videos', '/', 'Videos'],
    ['upload', '/upload', 'Upload'],
    ['library', '/library', 'Folders & tags'],
    ['live', '/live', 'Live'],
    ['keys', '/keys', 'API Keys'],
    ['restrictions', '/restrictions', 'Restrictions'],
    ['watermarks', '/watermarks', 'Watermarks'],
    ['webhooks', '/webhooks', 'Webhooks'],
    ['analytics', '/analytics', 'Analytics'],
    ['usage', '/usage', 'Usage'],
    ['video', `/videos/${ids.pub}`, 'Launch keynote'],
    ['video-private', `/videos/${ids.priv}`, 'Board meeting'],
    ['video-audio', `/videos/${ids.audio}`, 'podcast episode'],
    ['video-analytics', `/videos/${ids.pub}/analytics`, 'Launch keynote'],
  ] as const;

  for (const viewport of Object.keys(VIEWPORTS)) {
    it(`shows every page at ${viewport} without sideways scrolling or a console error`, async () => {
      const page = await ctxs[viewport].newPage();
      const errors = watchConsole(page);
      const wide: string[] = [];
      for (const [name, to, heading] of pages()) {
        await page.goto(`${s.url}/dashboard${to}`);
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
        await page.waitForLoadState('networkidle', { timeout: 10_000 }).catch(() => undefined);
        await page.waitForTimeout(500);
        const { scroll, client } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
        if (scroll > client) wide.push(`${name}: ${scroll} px in ${client}`);
        await page.screenshot({ path: path.join(SHOTS, `${name}-${viewport}.png`), fullPage: true });
      }
      await page.close();
      assert.deepEqual(wide, [], 'pages wider than the screen');
      assert.deepEqual(errors, [], 'console errors');
    });
  }

  /** The encoder back on air if CI's load made it drop (these tests are about the page, not the feed). */
  async function onAir(): Promise<void> {
    if ((await s.get(`/v1/live-streams/${ids.ls}`).expect(200)).body.status === 'active') return;
    push?.stop();
    push = pushRtmp(`${s.rtmpBase}/${ids.lsKey}`, { seconds: 900 });
    await waitFor('on air again', async () => (await s.get(`/v1/live-streams/${ids.ls}`).expect(200)).body.status === 'active', 90_000);
  }

  it('keeps an active row’s actions on screen at 1366 px: Disable and Delete are not cut off', async () => {
    await onAir();
    const page = await ctxs.desktop.newPage();
    await page.goto(`${s.url}/dashboard/live`);
    const row = page.locator(`tr[data-live-id="${ids.ls}"]`);
    await row.locator('[data-status="active"]').waitFor();
    for (const name of ['End broadcast', 'Disable', 'Delete']) {
      const button = row.getByRole('button', { name, exact: true });
      const box = (await button.boundingBox())!;
      const visible = await button.evaluate((b) => {
        // The button's own box inside every scrolling ancestor's visible box, and the viewport.
        const r = b.getBoundingClientRect();
        for (let e = b.parentElement; e; e = e.parentElement) {
          const c = e.getBoundingClientRect();
          const st = getComputedStyle(e);
          if (/(auto|scroll|hidden)/.test(st.overflowX) && (r.left < c.left - 1 || r.right > c.right + 1)) return false;
        }
        return r.left >= 0 && r.right <= document.documentElement.clientWidth;
      });
      assert.ok(visible, `${name} at x=${box.x}..${box.x + box.width} is cut off`);
    }
    await page.close();
  });

  it('plays the preview of a private, restricted live stream, authorised for the dashboard (no 403)', async () => {
    await onAir();
    const page = await ctxs.desktop.newPage();
    const errors = watchConsole(page);
    await page.goto(`${s.url}/dashboard/live`);
    const studio = page.getByRole('region', { name: 'Live studio' });
    await studio.locator('select').first().selectOption(ids.ls);
    await page.waitForFunction((id) => ((document.querySelector(`[data-preview="${id}"]`) as HTMLVideoElement | null)?.videoWidth ?? 0) > 0, ids.ls, { timeout: 45_000 });
    await page.screenshot({ path: path.join(SHOTS, 'live-preview-private.png') });
    await page.close();
    assert.deepEqual(errors, []);
  });

  it('names the recordings by title and start time, and links them', async () => {
    const page = await ctxs.desktop.newPage();
    await page.goto(`${s.url}/dashboard/live`);
    const cell = page.locator(`tr[data-live-id="${ids.ls}"] [data-recordings]`);
    const rec = (await s.get(`/v1/live-streams/${ids.ls}`).expect(200)).body.recent_video_ids[0];
    const video = (await s.get(`/v1/videos/${rec}`).expect(200)).body;
    // The link reads "Recording" until the recording's own read answers (on a loaded shard, after
    // the row is drawn): wait for its title.
    const link = cell.getByRole('link', { name: video.title });
    await link.waitFor();
    assert.equal(await link.getAttribute('href'), `/dashboard/videos/${rec}`);
    assert.equal((await link.textContent())!.trim(), video.title);
    assert.match((await cell.textContent())!, /\d{1,2}:\d{2}/, 'a start time');
    assert.doesNotMatch((await cell.textContent())!, /…/, 'no truncated id');
    await page.close();
  });

  it('shows a state instead of an empty thumbnail: processing or waiting, private, audio only', async () => {
    const page = await ctxs.desktop.newPage();
    await page.goto(`${s.url}/dashboard/`);
    const thumb = (id: string) => page.locator(`[data-video-id="${id}"] .thumb`);
    await thumb(ids.pub).locator('img').waitFor();
    assert.match((await thumb(ids.waiting).textContent())!, /Waiting for upload/);
    assert.match((await thumb(ids.priv).textContent())!, /Private/);
    assert.match((await thumb(ids.audio).textContent())!, /Audio only/);
    for (const id of [ids.waiting, ids.priv, ids.audio]) assert.doesNotMatch((await thumb(id).textContent())!, /…/);
    await page.close();
  });

  it('offers the upload in a new workspace’s empty library, and says "no match" only for a search', async () => {
    const page = await ctxs.desktop.newPage();
    await page.goto(`${s.url}/dashboard/`);
    await page.locator('.switcher select').selectOption(ids.fresh);
    const empty = page.getByTestId('empty-library');
    await empty.waitFor();
    assert.doesNotMatch((await page.locator('main').textContent())!, /No videos match/);
    assert.equal(await empty.getByRole('link', { name: /Upload/ }).getAttribute('href'), '/dashboard/upload');
    await page.screenshot({ path: path.join(SHOTS, 'videos-empty.png'), fullPage: true });
    await page.getByLabel('Search titles').fill('nothing like this');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No videos match.').waitFor();
    await page.locator('.switcher select').selectOption(s.ws.id);
    await page.locator('.video-card').first().waitFor();
    await page.close();
  });

  it('sets the restriction form’s checkbox beside its label, at its own size, and spaces the defaults from the form', async () => {
    for (const viewport of Object.keys(VIEWPORTS)) {
      const page = await ctxs[viewport].newPage();
      await page.goto(`${s.url}/dashboard/restrictions`);
      const form = page.getByRole('form', { name: 'Create a playback restriction' });
      const box = (await form.getByRole('checkbox').boundingBox())!;
      // The label's words themselves (a Range over its text), not the label's box around the checkbox.
      const text = await form.getByText('Allow requests without a Referer').evaluate((label) => {
        const node = Array.from(label.childNodes).find((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim())!;
        const range = document.createRange();
        range.selectNodeContents(node);
        const r = range.getBoundingClientRect();
        return { x: r.x, y: r.y, width: r.width, height: r.height };
      });
      assert.ok(box.width <= 24 && box.height <= 24, `checkbox ${box.width}×${box.height}`);
      assert.ok(box.x + box.width <= text.x + 1, 'the checkbox is left of its label');
      assert.ok(Math.abs(box.y + box.height / 2 - (text.y + text.height / 2)) <= 6, 'on the label’s line');
      const formBox = (await form.boundingBox())!;
      const defaults = (await page.getByRole('form', { name: 'Workspace defaults' }).boundingBox())!;
      assert.ok(defaults.y - (formBox.y + formBox.height) >= 16, `defaults ${defaults.y - (formBox.y + formBox.height)} px below the form`);
      await page.close();
    }
  });

  it('shows the sign-in page to a signed-out visitor with no failed request in the console, at both widths', async () => {
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const ctx = await browser.newContext({ viewport });
      const page = await ctx.newPage();
      const errors = watchConsole(page);
      await page.goto(`${s.url}/dashboard`);
      await page.getByRole('heading', { name: 'Sign in to vidhost' }).waitFor();
      await page.waitForLoadState('networkidle');
      const { scroll, client } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      assert.ok(scroll <= client, `${scroll} px in ${client}`);
      await page.screenshot({ path: path.join(SHOTS, `login-${name}.png`), fullPage: true });
      await ctx.close();
      assert.deepEqual(errors, []);
    }
  });

  it('serves a favicon', async () => {
    const res = await fetch(`${s.url}/favicon.ico`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^image\//);
  });
});
