import assert from 'node:assert/strict';
import { type Browser, chromium, type Page } from 'playwright-core';
import { buildDashboard } from '../../lib/dashboard/build';
import { account } from '../dashboard/accounts';
import { diagnoseLive, type Edge, type LiveStack, startEdge, startLiveStack, waitFor, waitLive } from './helpers';

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
  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    console.log(`edge log:\n${edge?.log().slice(-3000)}`);
    console.log(JSON.stringify(await s.db('live_streams').select('id', 'status', 'last_disconnect_reason', 'active_video_id', 'encoder_session', 'broadcast_reserved_at', 'publish_ended_at')));
    console.log(`live:\n${await diagnoseLive(s, edge)}`);
  });
  after(async () => {
    await browser?.close();
    await edge?.stop();
    await s?.close();
  });

  /** Signs in, creates a live stream titled `title` on the Live page and returns its studio and id. */
  async function openStudio(page: Page, title: string) {
    await page.goto(`${s.url}/dashboard`);
    await page.getByLabel('Email').fill(me.email);
    await page.getByLabel('Password').fill(me.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Videos' }).waitFor();
    await page.getByRole('navigation').getByRole('link', { name: 'Live', exact: true }).click();
    await page.getByLabel('Title').fill(title);
    const created = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname.endsWith('/live-streams'));
    await page.getByRole('button', { name: 'Create live stream' }).click();
    const id = ((await (await created).json()) as { id: string }).id;
    await page.getByTestId('secret').waitFor();
    const studio = page.getByRole('region', { name: 'Live studio' });
    // The studio is on the stream just created at once, not on the first listed until a reload.
    assert.equal(await studio.getAttribute('data-studio'), id);
    return { studio, id };
  }

  it('shows RTMP, SRT and WHIP beside each other, publishes the camera over WHIP, then shows health and a WHEP preview', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const { studio, id } = await openStudio(page, 'studio');
    const ls = (await s.get(`/v1/live-streams/${id}`).expect(200)).body;
    for (const [name, url] of [['RTMP', ls.ingest.rtmp_url], ['SRT', ls.ingest.srt_url], ['WHIP', ls.ingest.whip_url]]) {
      assert.equal(await studio.locator(`[data-ingest="${name}"] code`).textContent(), url);
    }
    // The key just shown is already in the studio's form.
    await studio.getByRole('button', { name: 'Go live with the camera' }).click();
    await studio.getByRole('button', { name: /Stop \(live\)/ }).waitFor({ timeout: 30_000 });
    const active = await waitLive(s, id, { timeoutMs: 90_000 });
    // The ladder is planned from the first picture the live worker probes: the studio keeps the
    // camera's size from its first frame (issue 46: Chromium began at 320×180 and the whole
    // recording stayed 180p). The studio asks 1280×720 of Chromium's fake camera.
    const rungs = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body.renditions as Array<{ height: number }>;
    assert.equal(Math.max(...rungs.map((r) => r.height)), 720, JSON.stringify(rungs));
    await studio.locator('[data-health="whip"]').waitFor({ timeout: 30_000 });
    // The panel appears with the ingest kind first; the codec and size follow with the edge's first health report.
    const health = await waitFor('health with codec and size', async () => {
      const text = (await studio.locator('[data-health]').textContent()) ?? '';
      return /WHIP · h264 \d+×\d+/i.test(text) && text;
    }, 30_000);
    assert.match(health, /WHIP · h264 1280×720/i);
    await page.getByText('Preview · WebRTC (WHEP)').waitFor({ timeout: 30_000 });
    await page.waitForFunction((sel) => ((document.querySelector(sel) as HTMLVideoElement)?.videoWidth ?? 0) > 0, `[data-preview="${id}"]`, { timeout: 30_000 });
    await studio.getByRole('button', { name: /Stop/ }).click();
    await waitFor('disconnected', async () => (await s.get(`/v1/live-streams/${id}`).expect(200)).body.status !== 'active', 30_000);
    assert.deepEqual(errors, []);
  });

  // SPEC §22 "ending is final" (red team: the studio reconnected, went live again and left a second
  // recording at "Processing 0%"): End broadcast while the studio publishes stops the studio, which
  // says why; no second recording; the recording turns ready. The preview's WHEP session is no view
  // and is DELETEd when the preview closes.
  it('End broadcast while the studio is live: the studio stops and says why, no second recording, the preview was no view', async function () {
    // Two broadcasts and a reconnect window's worth of waiting, on a machine shared at load 30+.
    this.timeout(600_000);
    // The free plan's one broadcast: the last test's stream waits in its reconnect window.
    for (const x of (await s.get('/v1/live-streams').expect(200)).body.data as Array<{ id: string; status: string }>) {
      if (x.status !== 'idle') await s.post(`/v1/live-streams/${x.id}/complete`).expect(200);
    }
    await waitFor('every stream idle', async () => ((await s.get('/v1/live-streams').expect(200)).body.data as Array<{ status: string }>).every((x) => x.status === 'idle'), 60_000);
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const whepDeletes: string[] = [];
    const whipPosts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'DELETE' && /\/whep\//.test(r.url())) whepDeletes.push(r.url());
      if (r.method() === 'POST' && /\/live\/whip/.test(r.url())) whipPosts.push(r.url());
    });
    const { studio, id } = await openStudio(page, 'ending is final');
    await studio.getByRole('button', { name: 'Go live with the camera' }).click();
    await studio.getByRole('button', { name: /Stop \(live\)/ }).waitFor({ timeout: 30_000 });
    const active = await waitLive(s, id, { timeoutMs: 240_000 });
    await page.getByText('Preview · WebRTC (WHEP)').waitFor({ timeout: 60_000 });
    await page.waitForFunction((sel) => ((document.querySelector(sel) as HTMLVideoElement)?.videoWidth ?? 0) > 0, `[data-preview="${id}"]`, { timeout: 30_000 });
    // The preview is a connected WHEP session, and not a view.
    const onEdge = (await (await fetch(`${edge.httpUrl}/streams/${id}`, { headers: edge.headers })).json()) as { whep_viewers: number };
    assert.equal(onEdge.whep_viewers, 1, 'the preview is connected');
    await s.app.hot.whep.poll();
    await s.app.hot.beacons.flush();
    assert.equal(Number((await s.db('analytics_events').where({ subject_id: id }).count('* as n'))[0].n), 0, 'the preview is no view');

    await page.locator(`[data-live-id="${id}"]`).getByRole('button', { name: 'End broadcast' }).click();
    // The studio stops (its retry is refused) and says why, instead of going live again.
    await studio.locator('[role="alert"][data-ended]').waitFor({ timeout: 120_000 });
    assert.match((await studio.locator('[role="alert"]').textContent()) ?? '', /broadcast was ended/i);
    await studio.getByRole('button', { name: 'Go live with the camera' }).waitFor({ timeout: 10_000 });
    assert.ok(whipPosts.length >= 2 && whipPosts.slice(1).every((u) => u.endsWith('?resume=1')), whipPosts.join(' '));
    await waitFor('idle', async () => (await s.get(`/v1/live-streams/${id}`).expect(200)).body.status === 'idle', 120_000);
    const rec = await waitFor('the recording ready', async () => {
      const v = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body;
      return v.status !== 'processing' && v;
    }, 120_000);
    assert.equal(rec.status, 'ready');
    // Long enough for a studio retry (every 3 s) to have gone live again: none did.
    await new Promise((r) => setTimeout(r, 8000));
    const ls = (await s.get(`/v1/live-streams/${id}`).expect(200)).body;
    assert.equal(ls.status, 'idle');
    assert.equal(ls.active_video_id, null);
    const recordings = await s.db('videos').where({ live_stream_id: id }).select('status');
    assert.deepEqual(recordings, [{ status: 'ready' }], 'one recording, ready');
    assert.ok(whepDeletes.length >= 1, 'the preview DELETEd its WHEP session as it closed');
    assert.deepEqual(errors, []);

    // Its user starts again: a new broadcast.
    await studio.getByRole('button', { name: 'Go live with the camera' }).click();
    await studio.getByRole('button', { name: /Stop \(live\)/ }).waitFor({ timeout: 30_000 });
    await waitFor('active again', async () => (await s.get(`/v1/live-streams/${id}`).expect(200)).body.status === 'active', 240_000);
    await studio.getByRole('button', { name: /Stop/ }).click();
    await page.close();
  });
});
