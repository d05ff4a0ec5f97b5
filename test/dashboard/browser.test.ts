import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { buildDashboard } from '../../lib/dashboard/build';
import { closeContexts, sharedBrowser } from '../support/chromium';
import { waitUntil } from '../playback/helpers';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { startReceiver, type Receiver } from '../webhooks/receiver';
import { account } from './accounts';

const SHOTS = path.join(__dirname, '..', '..', 'test-output', 'dashboard');

/**
 * The dashboard in Debian's Chromium against the real stack (API, Temporal workers, Postgres,
 * ffmpeg). The steps build on each other, as a person would use the dashboard.
 */
describe('Dashboard in a real browser', function () {
  this.timeout(180_000);
  let s: Stack;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let receiver: Receiver;
  let evil: http.Server;
  let evilUrl: string;
  let clip: Buffer;
  let otherVideoId: string;
  let uploaded: string[] = [];
  // Emails of this file only: every stack of a run shares one database.
  const me = { email: 'browser-owner@example.test', password: 'correct horse battery' };
  const errors: string[] = [];

  before(async function () {
    this.timeout(300_000);
    fs.mkdirSync(SHOTS, { recursive: true });
    s = await startStack({ env: { LOGIN_MAX_FAILURES_PER_ACCOUNT: '3' } });
    const [, clipPath, b] = await Promise.all([
      buildDashboard(),
      makeClip({ width: 320, height: 180, seconds: 4 }),
      sharedBrowser(),
    ]);
    browser = b;
    clip = fs.readFileSync(clipPath);
    await account(s, me.email, s.ws.id);
    await account(s, 'browser-victim@example.test', s.ws.id);
    await s.db('login_failures').delete();
    // Another workspace, which the person does not belong to, with a video of its own.
    const other = await s.newWorkspace();
    otherVideoId = (await s.post('/v1/upload/init', { filename: 'o.mp4', size: 10, content_type: 'video/mp4', title: 'other workspace secret' }, other.fullKey).expect(201)).body.video_id;
    receiver = await startReceiver();
    // A page on another origin of the same site (another port): SameSite cookies still go along,
    // so only the CSRF defences stand between it and the API.
    evil = http.createServer((req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end(`<!doctype html><form method="POST" action="${s.url}/v1/api-keys"><button>go</button></form>`);
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
    ctx = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('dialog', (d) => void d.accept());
  });

  after(async () => {
    await closeContexts(browser);
    await receiver?.close();
    evil?.close();
  });

  const shot = (name: string, p: Page = page) => p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  const go = async (to: string) => {
    await page.getByRole('navigation').getByRole('link', { name: to, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: to }).waitFor();
  };

  it('refuses a wrong password, throttles repeats, then signs in', async () => {
    await page.goto(`${s.url}/dashboard`);
    await page.getByLabel('Email').fill('browser-victim@example.test');
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'wrong' }).waitFor();
    await shot('login');
    for (let i = 0; i < 2; i++) {
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
    }
    // Now even the right password is refused for a while.
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Too many' }).waitFor();

    await page.getByLabel('Email').fill(me.email);
    await page.getByLabel('Password').fill(me.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Videos' }).waitFor();
    const cookie = (await ctx.cookies()).find((c) => c.name === 'vh_session');
    assert.ok(cookie?.httpOnly && cookie.sameSite === 'Lax');
  });

  it('creates a full key whose secret works against the API, then revokes it (401)', async () => {
    await go('API Keys');
    await page.getByLabel('Name').fill('from the dashboard');
    await page.getByLabel('Access').selectOption('full');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('secret').textContent())!.trim();
    assert.match(secret, /^vhk_/);
    await shot('keys');
    const call = () => fetch(`${s.url}/v1/videos`, { headers: { Authorization: `Bearer ${secret}` } });
    assert.equal((await call()).status, 200);
    await waitUntil(async () => !!(await s.db('api_keys').where({ name: 'from the dashboard' }).first('last_used_at')).last_used_at, 'last_used_at');
    await page.reload();
    const row = page.locator('tr', { hasText: 'from the dashboard' });
    assert.doesNotMatch((await row.textContent())!, /never/);
    await row.getByRole('button', { name: /Revoke/ }).click();
    await row.waitFor({ state: 'detached' });
    assert.equal((await call()).status, 401);
  });

  it('adds a webhook endpoint and shows its secret once', async () => {
    await go('Webhooks');
    await page.getByLabel('Endpoint URL').fill(receiver.url);
    await page.getByLabel('Description').fill('test receiver');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    assert.match((await page.getByTestId('secret').textContent())!, /^whsec_/);
    await page.getByRole('link', { name: receiver.url }).waitFor();
  });

  it('creates, edits and deletes a playback restriction, and sets the workspace default (SPEC §20)', async () => {
    await go('Restrictions');
    await page.getByLabel('Allowed domains').fill('Example.com, *.bücher.de');
    await page.getByRole('button', { name: 'Create restriction' }).click();
    const row = page.locator('tr', { hasText: 'xn--bcher-kva.de' });
    await row.waitFor();
    const id = (await row.getAttribute('data-restriction-id'))!;
    assert.deepEqual((await s.db('playback_restrictions').where({ id }).first()).allowed_domains, ['example.com', '*.xn--bcher-kva.de']);
    await page.getByLabel('Default restriction').selectOption(id);
    await waitUntil(async () => (await s.db('workspaces').where({ id: s.ws.id }).first()).default_playback_restriction_id === id, 'the default');
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('form', { name: `Edit ${id}` }).getByLabel('Allowed domains').fill('*.com');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').waitFor();
    await page.getByRole('form', { name: `Edit ${id}` }).getByLabel('Allowed domains').fill('example.org');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('tr', { hasText: 'example.org' }).waitFor();
    await shot('restrictions');
    await page.locator('tr', { hasText: 'example.org' }).getByRole('button', { name: /Delete/ }).click();
    await page.locator('tr', { hasText: 'example.org' }).waitFor({ state: 'detached' });
    assert.equal(await s.db('playback_restrictions').where({ id }).first(), undefined);
  });

  it('creates a live stream and shows its key once, with the RTMP server to paste into OBS', async () => {
    await go('Live');
    await page.getByLabel('Title').fill('dashboard live');
    await page.getByRole('button', { name: 'Create live stream' }).click();
    assert.match((await page.getByTestId('secret').textContent())!, /^lsk[0-9a-f]{32}$/);
    await page.getByText(/rtmp:\/\/.*\/live/).first().waitFor();
    const row = page.locator('tr', { hasText: 'dashboard live' });
    assert.equal(await row.locator('[data-status]').getAttribute('data-status'), 'idle');
  });

  it('uploads two clips by drag and drop, with a progress bar each, until both are ready', async () => {
    await go('Upload');
    await shot('upload-empty');
    // A drop event with a DataTransfer built in the page from the clip's bytes.
    await page.getByTestId('dropzone').evaluate((zone, b64) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'first clip.mp4', { type: 'video/mp4' }));
      dt.items.add(new File([bytes], 'second clip.mp4', { type: 'video/mp4' }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, clip.toString('base64'));
    const items = page.locator('li.upload');
    await waitUntil(async () => (await items.count()) === 2, 'two upload rows');
    for (const name of ['first clip.mp4', 'second clip.mp4']) {
      const bar = page.getByRole('progressbar', { name: `Upload of ${name}` });
      await bar.waitFor();
      await waitUntil(async () => (await bar.getAttribute('value')) === '100', `${name} uploaded`, 30_000);
    }
    await shot('upload-progress');
    await waitUntil(async () => (await page.locator('li.upload [data-status="ready"]').count()) === 2, 'both videos ready', 150_000);
    await shot('upload');
    uploaded = (await s.get('/v1/videos').expect(200)).body.data.map((v: { id: string }) => v.id);
    assert.equal(uploaded.length, 2);
  });

  it('lists the videos, never another workspace’s', async () => {
    await go('Videos');
    await page.locator('.video-card').first().waitFor();
    assert.equal(await page.locator('.video-card').count(), 2);
    assert.equal(await page.locator('[data-status="ready"]').count(), 2);
    assert.doesNotMatch((await page.locator('main').textContent())!, /other workspace secret/);
    const status = await page.evaluate(async (id) => (await fetch(`/v1/videos/${id}`)).status, otherVideoId);
    assert.equal(status, 404);
    await shot('videos');
  });

  it('plays a video in the embed player and shows embed code and a signed URL', async () => {
    await page.getByRole('link', { name: 'first clip' }).click();
    await page.getByRole('heading', { level: 1, name: 'first clip' }).waitFor();
    const frame = await (await page.waitForSelector('iframe.player')).contentFrame();
    assert.ok(frame);
    await frame.waitForSelector('video');
    await frame.evaluate(() => {
      const v = document.querySelector('video')!;
      v.muted = true;
      void v.play();
    });
    await frame.waitForFunction(() => document.querySelector('video')!.currentTime > 0.5, undefined, { timeout: 30_000 });
    const signed = await page.getByTestId('signed-url').inputValue();
    assert.match(signed, /\/cdn\/v\/[^/]+\/master\.m3u8$/);
    assert.equal((await fetch(signed)).status, 200);
    assert.match(await page.getByLabel('Embed code').inputValue(), /<iframe src="http:\/\/127\.0\.0\.1:\d+\/player\/embed\/vid_/);
    await page.getByRole('cell', { name: 'ready' }).first().waitFor();
    await shot('video');
  });

  it('edits title, visibility and tags, then filters by tag', async () => {
    await page.getByLabel('Title').fill('Edited clip');
    await page.getByLabel('Description').fill('Shot on a test server');
    await page.getByLabel('Visibility').selectOption('private');
    await page.getByLabel('Tags (comma-separated)').fill('holiday, beach');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('heading', { level: 1, name: 'Edited clip' }).waitFor();
    const id = page.url().split('/').pop()!;
    const v = (await s.get(`/v1/videos/${id}`).expect(200)).body;
    assert.deepEqual([v.title, v.visibility, [...v.tags].sort()], ['Edited clip', 'private', ['beach', 'holiday']]);

    await go('Videos');
    await page.locator('select[name="tag"]').selectOption('holiday');
    await page.getByRole('button', { name: 'Apply' }).click();
    await waitUntil(async () => (await page.locator('.video-card').count()) === 1, 'one tagged video');
    assert.match((await page.locator('.video-card').textContent())!, /Edited clip/);
  });

  it('manages folders and tags', async () => {
    await go('Folders & tags');
    await page.getByLabel('New folder').fill('Trips');
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.locator('ul.plain li', { hasText: 'Trips' }).waitFor();
    await page.getByLabel('New tag').fill('archive');
    await page.getByRole('button', { name: 'Create tag' }).click();
    await page.locator('ul.plain li', { hasText: 'archive' }).waitFor();
    await page.getByRole('button', { name: 'Delete tag beach' }).click();
    await page.locator('ul.plain li', { hasText: 'beach' }).waitFor({ state: 'detached' });
    const tags = (await s.get('/v1/tags').expect(200)).body.data.map((t: { name: string }) => t.name).sort();
    assert.deepEqual(tags, ['archive', 'holiday']);
    await shot('library');
  });

  it('deletes a video after confirmation', async () => {
    await go('Videos');
    await page.getByRole('link', { name: 'second clip' }).click();
    await page.getByRole('button', { name: 'Delete video' }).click();
    await page.getByRole('button', { name: 'Delete permanently' }).click();
    await page.getByRole('heading', { level: 1, name: 'Videos' }).waitFor();
    const left = (await s.get('/v1/videos').expect(200)).body.data.map((v: { title: string }) => v.title);
    assert.deepEqual(left, ['Edited clip']);
  });

  it('shows the deliveries in the webhook log', async () => {
    await waitUntil(async () => receiver.received.some((r) => r.json?.type === 'video.deleted'), 'video.deleted delivered', 60_000);
    await go('Webhooks');
    await page.getByRole('link', { name: receiver.url }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
    await page.locator('tr[data-status="succeeded"]', { hasText: 'video.ready' }).first().waitFor();
    await page.locator('tr', { hasText: 'video.deleted' }).first().waitFor();
    const n = receiver.received.length;
    await page.locator('tr', { hasText: 'video.deleted' }).first().getByRole('button', { name: 'Retry' }).click();
    await waitUntil(async () => receiver.received.length > n, 'the retried delivery', 30_000);
    await shot('webhook');
    await go('Webhooks');
    await shot('webhooks');
  });

  it('shows usage against the plan with a chart', async () => {
    await go('Usage');
    await page.getByRole('img', { name: 'Bandwidth per month' }).waitFor();
    assert.match((await page.locator('main').textContent())!, /1 videos/);
    await shot('usage');
  });

  it('refuses a state change from another origin (CSRF)', async () => {
    const before = await s.db('api_keys').where({ workspace_id: s.ws.id }).count({ n: '*' });
    const p = await ctx.newPage();
    await p.goto(evilUrl);
    await p.getByRole('button', { name: 'go' }).click();
    await p.waitForURL(`${s.url}/v1/api-keys`);
    assert.match((await p.locator('body').textContent())!, /csrf_origin/);
    await p.close();
    assert.deepEqual(await s.db('api_keys').where({ workspace_id: s.ws.id }).count({ n: '*' }), before);
  });

  it('works at phone width', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.addCookies(await ctx.cookies());
    const p = await phone.newPage();
    await p.goto(`${s.url}/dashboard/`);
    await p.locator('.video-card').first().waitFor();
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (overflow ${overflow}px)`);
    await shot('phone-videos', p);
    await phone.close();
  });

  it('updates a status badge in the list live, without a reload, until ready', async () => {
    const init = (await s.post('/v1/upload/init', { filename: 'live.mp4', size: clip.length, content_type: 'video/mp4', title: 'live one' }).expect(201)).body;
    await page.goto(`${s.url}/dashboard/`);
    const card = page.locator(`[data-video-id="${init.video_id}"]`);
    await card.locator('[data-status="pending_upload"]').waitFor();
    const put = await fetch(init.upload_url, { method: 'PUT', headers: init.upload_headers, body: new Uint8Array(clip) });
    assert.ok(put.ok, `PUT ${put.status}`);
    await s.post('/v1/upload/complete', { video_id: init.video_id }).expect(202);
    await card.locator('[data-status="ready"]').waitFor({ timeout: 150_000 });
  });

  it('switches workspace from the header and sees only that workspace', async () => {
    const second = await s.newWorkspace();
    const person = await s.db('people').where({ email: me.email }).first('id');
    await s.db('memberships').insert({ person_id: person.id, workspace_id: second.id, role: 'member' });
    await s.post('/v1/upload/init', { filename: 'w.mp4', size: 10, content_type: 'video/mp4', title: 'in the second workspace' }, second.fullKey).expect(201);
    await page.reload();
    await page.locator('.video-card').first().waitFor();
    await page.locator('.switcher select').selectOption(second.id);
    await page.locator('.video-card', { hasText: 'in the second workspace' }).waitFor();
    assert.equal(await page.locator('.video-card').count(), 1);
    await page.locator('.switcher select').selectOption(s.ws.id);
    await page.locator('.video-card', { hasText: 'Edited clip' }).waitFor();
    assert.doesNotMatch((await page.locator('main').textContent())!, /in the second workspace/);
  });

  // Issue 33: pages leave out what the role cannot do (docs/dashboard.md, "Roles"), instead of
  // showing forms the API then refuses with 403. The owner's flows above use the same pages.
  it('shows a member no form or button the API would refuse them', async () => {
    const ws = await s.newWorkspace();
    const person = await s.db('people').where({ email: me.email }).first('id');
    await s.db('memberships').insert({ person_id: person.id, workspace_id: ws.id, role: 'member' });
    const hook = (await s.post('/v1/webhooks', { url: receiver.url }, ws.fullKey).expect(201)).body;
    await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['member.example'] } }, ws.fullKey).expect(201);
    await page.reload();
    await page.locator('.switcher select').selectOption(ws.id);
    await page.getByRole('heading', { level: 1, name: 'Videos' }).waitFor();
    try {
      await go('Webhooks');
      await page.getByRole('link', { name: receiver.url }).waitFor();
      assert.equal(await page.getByRole('form', { name: 'Add a webhook endpoint' }).count(), 0, 'no webhook form');
      assert.equal(await page.getByLabel('Endpoint URL').count(), 0);
      await shot('member-webhooks');
      await page.getByRole('link', { name: receiver.url }).click();
      await page.getByRole('heading', { level: 1, name: 'Webhook endpoint' }).waitFor();
      await page.getByRole('heading', { level: 2, name: 'Delivery log' }).waitFor();
      for (const name of ['Disable', 'Delete endpoint', 'Retry']) assert.equal(await page.getByRole('button', { name }).count(), 0, name);
      assert.ok(await s.db('webhook_endpoints').where({ id: hook.id }).first());

      await go('Restrictions');
      await page.locator('tr', { hasText: 'member.example' }).waitFor();
      assert.equal(await page.getByRole('form', { name: 'Create a playback restriction' }).count(), 0);
      for (const name of [/Edit/, /Delete/]) assert.equal(await page.getByRole('button', { name }).count(), 0);
      assert.equal(await page.getByLabel('Default restriction').isDisabled(), true);
      assert.equal(await page.getByLabel('Encryption of new videos').isDisabled(), true);

      await go('API Keys');
      assert.deepEqual(await page.getByLabel('Access').locator('option').allTextContents(), ['Read']);
      // The workspace's CLI key is not the member's to revoke; a read key they make is.
      await page.locator('tr[data-key-id]').first().waitFor();
      assert.equal(await page.getByRole('button', { name: /Revoke/ }).count(), 0);
      await page.getByLabel('Name').fill('member read key');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByTestId('secret').waitFor();
      const mine = page.locator('tr', { hasText: 'member read key' });
      await mine.getByRole('button', { name: /Revoke/ }).click();
      await mine.waitFor({ state: 'detached' });
      assert.equal(await page.getByRole('button', { name: /Revoke/ }).count(), 0);
      assert.deepEqual(errors, []);
    } finally {
      await page.locator('.switcher select').selectOption(s.ws.id);
      await page.getByRole('heading', { level: 1, name: 'Videos' }).waitFor();
    }
  });

  it('signs out, and the cookie no longer works', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to vidhost' }).waitFor();
    const status = await page.evaluate(async () => (await fetch('/v1/videos')).status);
    assert.equal(status, 401);
    assert.deepEqual(errors, []);
  });
});
