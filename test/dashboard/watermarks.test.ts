import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { buildDashboard } from '../../lib/dashboard/build';
import { markBox, type Placement } from '../../lib/media/watermark';
import { closeContexts, sharedBrowser } from '../support/chromium';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { waitUntil } from '../playback/helpers';
import { solidImage } from '../watermarks/images';
import { account } from './accounts';
import { signIn, VIEWPORTS, watchConsole } from './pages';

const SHOTS = path.join(__dirname, '..', '..', 'test-output', 'dashboard', 'watermarks');
/** The frame the preview computes the box on (dashboard/src/components/MarkPreview.tsx): 16:9. */
const FRAME = { width: 1280, height: 720 };

/**
 * The mark's <img> inside its 16:9 preview sits where markBox (the encoder's placement) puts it:
 * the box on a 1280×720 frame, scaled to the preview's rendered size, to a pixel.
 */
async function assertPlaced(preview: Locator, placement: Placement, image: { width: number; height: number }, what: string): Promise<void> {
  const frame = (await preview.boundingBox())!;
  const img = preview.locator('img');
  await img.waitFor();
  await waitUntil(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth > 0), `${what}: the image loaded`);
  const got = (await img.boundingBox())!;
  assert.ok(Math.abs(frame.width / frame.height - 16 / 9) < 0.01, `${what}: the preview is 16:9 (${frame.width}×${frame.height})`);
  const want = markBox({ ...placement, ...image }, FRAME);
  const kx = frame.width / FRAME.width;
  const ky = frame.height / FRAME.height;
  const expected = { x: frame.x + want.x * kx, y: frame.y + want.y * ky, width: want.width * kx, height: want.height * ky };
  for (const side of ['x', 'y', 'width', 'height'] as const) {
    assert.ok(Math.abs(got[side] - expected[side]) <= 1, `${what}: ${side} ${got[side].toFixed(1)} where markBox says ${expected[side].toFixed(1)} (${JSON.stringify(want)} on 1280×720)`);
  }
  assert.equal(Number(await img.evaluate((i) => getComputedStyle(i).opacity)), placement.opacity, `${what}: opacity`);
}

/**
 * SPEC §24 in the dashboard, in Chromium against the real stack: a person makes a watermark in
 * the page (its placement previewed where the encoder puts it), finds it listed with its image,
 * makes it the workspace's default, and uploads with the picker; the API's read of each video
 * shows the watermark_id the picker chose.
 */
describe('Dashboard: watermarks (SPEC §24)', function () {
  this.timeout(300_000);
  let s: Stack;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let clip: Buffer;
  let png: Buffer;
  let markId: string;
  let errors: string[] = [];
  const me = { email: 'watermarks-owner@example.test', password: 'correct horse battery' };
  const placement: Placement = { position: 'top-left', padding: 0.1, scale: 0.25, opacity: 0.8 };

  before(async function () {
    this.timeout(300_000);
    fs.mkdirSync(SHOTS, { recursive: true });
    s = await startStack();
    const [, clipPath, b, image] = await Promise.all([buildDashboard(), makeClip({ width: 320, height: 180, seconds: 2 }), sharedBrowser(), solidImage('magenta', 64, 32)]);
    browser = b;
    png = image;
    clip = fs.readFileSync(clipPath);
    await account(s, me.email, s.ws.id);
    ctx = await browser.newContext({ viewport: VIEWPORTS.desktop });
    page = await signIn(await ctx.newPage(), s.url, me);
    errors = watchConsole(page);
    page.on('dialog', (d) => void d.accept());
  });

  after(async () => {
    await closeContexts(browser);
  });

  const shot = (name: string, p: Page = page) => p.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  const form = () => page.getByRole('form', { name: 'Create a watermark' });

  it('refuses a placement the API would refuse, and shows the API’s own message for a file that is not an image', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Watermarks', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Watermarks' }).waitFor();
    await page.getByText('No watermarks yet.').waitFor();
    await form().getByLabel('Image').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: png });
    await form().getByLabel('Padding').fill('0.9');
    await form().getByRole('button', { name: 'Create watermark' }).click();
    await form().getByRole('alert').filter({ hasText: 'Padding must be a number from 0 to 0.5' }).waitFor();
    await form().getByLabel('Padding').fill('0.05');
    // An SVG named .png: the API judges the bytes (415 unsupported_image_type) and the page says what it said.
    await form().getByLabel('Image').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>') });
    const answer = page.waitForResponse((r) => r.url().includes('/v1/watermarks') && r.request().method() === 'POST');
    await form().getByRole('button', { name: 'Create watermark' }).click();
    const res = await answer;
    assert.equal(res.status(), 415);
    const refusal = (await res.json()).error;
    assert.equal(refusal.code, 'unsupported_image_type');
    await form().getByRole('alert').filter({ hasText: refusal.message }).waitFor();
    await shot('refused');
    assert.equal((await s.get('/v1/watermarks').expect(200)).body.data.length, 0, 'nothing was made');
  });

  it('creates a watermark with its placement, previewed and then listed where markBox puts it', async () => {
    await form().getByLabel('Image').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: png });
    await form().getByLabel('Name').fill('Corner logo');
    await form().getByLabel('Position').selectOption(placement.position);
    await form().getByLabel('Padding').fill(String(placement.padding));
    await form().getByLabel('Scale').fill(String(placement.scale));
    await form().getByLabel('Opacity').fill(String(placement.opacity));
    await assertPlaced(page.getByRole('img', { name: 'Preview of the new watermark on a 16:9 picture' }), placement, { width: 64, height: 32 }, 'the form’s preview');
    await shot('form-preview');
    await form().getByRole('button', { name: 'Create watermark' }).click();
    const row = page.locator('tr[data-watermark-id]', { hasText: 'Corner logo' });
    await row.waitFor();
    markId = (await row.getAttribute('data-watermark-id'))!;
    const made = (await s.get(`/v1/watermarks/${markId}`).expect(200)).body;
    assert.deepEqual({ name: made.name, position: made.position, padding: made.padding, scale: made.scale, opacity: made.opacity, width: made.width, height: made.height }, { name: 'Corner logo', ...placement, width: 64, height: 32 });
    // The row's image is the stored one (GET /v1/watermarks/{id}/image with the session), placed as the encoder places it.
    await assertPlaced(row.getByRole('img', { name: /Corner logo/ }), placement, made, 'the listed profile');
    assert.equal(await row.locator('img').evaluate((i: HTMLImageElement) => `${i.naturalWidth}×${i.naturalHeight}`), '64×32');
    await shot('listed');
  });

  it('makes it the workspace default and unsets it', async () => {
    const row = page.locator(`tr[data-watermark-id="${markId}"]`);
    await row.getByRole('button', { name: 'Make default' }).click();
    await row.locator('[data-default]').waitFor();
    assert.deepEqual((await s.get('/v1/watermark-defaults').expect(200)).body, { default_watermark_id: markId });
    await row.getByRole('button', { name: 'Unset default' }).click();
    await row.locator('[data-default]').waitFor({ state: 'detached' });
    assert.deepEqual((await s.get('/v1/watermark-defaults').expect(200)).body, { default_watermark_id: null });
  });

  /** Uploads the clip from the Upload page with the picker on `choice` (its option's label); answers the new video's id. */
  async function uploadWith(choice: string | RegExp, name: string): Promise<string> {
    // A fresh load: the picker reads the profiles and the workspace's default as they are now.
    await page.goto(`${s.url}/dashboard/upload`);
    await page.getByRole('heading', { level: 1, name: 'Upload' }).waitFor();
    const picker = page.getByLabel('Watermark');
    await waitUntil(async () => (await picker.locator('option').count()) >= 3, 'the profiles in the picker');
    const option = picker.locator('option', { hasText: choice });
    await picker.selectOption(await option.getAttribute('value'));
    await page.locator('input[type="file"]').setInputFiles({ name, mimeType: 'video/mp4', buffer: clip });
    const item = page.locator('li.upload', { hasText: name });
    const open = item.getByRole('link', { name: 'Open video' });
    await open.waitFor({ timeout: 60_000 });
    return (await open.getAttribute('href'))!.split('/').pop()!;
  }

  it('uploads with the picker: the video’s read shape shows the watermark_id it chose (a profile, none, the default)', async () => {
    const named = await uploadWith(/^Corner logo/, 'named.mp4');
    await shot('upload-picker');
    assert.equal((await s.get(`/v1/videos/${named}`).expect(200)).body.watermark_id, markId);
    await s.patch('/v1/watermark-defaults', { default_watermark_id: markId }).expect(200);
    const none = await uploadWith(/^None$/, 'none.mp4');
    assert.equal((await s.get(`/v1/videos/${none}`).expect(200)).body.watermark_id, null, '"None" opts out of the default');
    const byDefault = await uploadWith(/^Workspace default \(Corner logo/, 'default.mp4');
    assert.equal((await s.get(`/v1/videos/${byDefault}`).expect(200)).body.watermark_id, markId, '"Workspace default" takes the default');
    await s.patch('/v1/watermark-defaults', { default_watermark_id: null }).expect(200);
  });

  it('sends the chosen watermark_id from the Live stream form', async () => {
    await page.getByRole('navigation').getByRole('link', { name: 'Live', exact: true }).click();
    const live = page.getByRole('form', { name: 'Create a live stream' });
    await live.getByLabel('Title').fill('marked show');
    const picker = live.getByLabel('Watermark');
    await waitUntil(async () => (await picker.locator('option').count()) >= 3, 'the profiles in the picker');
    await picker.selectOption(markId);
    const sent = page.waitForRequest((r) => r.url().endsWith('/v1/live-streams') && r.method() === 'POST');
    await live.getByRole('button', { name: 'Create live stream' }).click();
    const req = await sent;
    assert.equal(req.postDataJSON().watermark_id, markId);
    const res = (await req.response())!;
    // POST /v1/live-streams takes watermark_id (issue 48's live part): the read shape shows it.
    assert.equal(res.status(), 201);
    const id = (await res.json()).id;
    assert.equal((await s.get(`/v1/live-streams/${id}`).expect(200)).body.watermark_id, markId);
  });

  it('fits 390 and 1366 px without sideways scrolling, with no console error', async () => {
    for (const [name, viewport] of Object.entries(VIEWPORTS)) {
      const c = await browser.newContext({ viewport, ...(viewport.width < 500 ? { isMobile: true, hasTouch: true } : {}) });
      const p = await signIn(await c.newPage(), s.url, me);
      const errs = watchConsole(p);
      await p.goto(`${s.url}/dashboard/watermarks`);
      await p.locator(`tr[data-watermark-id="${markId}"] img`).waitFor();
      await p.getByRole('form', { name: 'Create a watermark' }).getByLabel('Image').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: png });
      await p.getByRole('img', { name: 'Preview of the new watermark on a 16:9 picture' }).locator('img').waitFor();
      const { scroll, client } = await p.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      await shot(`page-${name}`, p);
      assert.ok(scroll <= client, `${name}: ${scroll} px in ${client}`);
      assert.deepEqual(errs, [], `${name}: console errors`);
      await c.close();
    }
    assert.deepEqual(errors.filter((e) => !/the server responded with a status of (400|415)/.test(e)), [], 'console errors other than the refusals the tests asked for');
  });

  it('deletes it: no longer listed nor offered, and the videos made with it keep their watermark_id', async () => {
    await page.goto(`${s.url}/dashboard/watermarks`);
    const row = page.locator(`tr[data-watermark-id="${markId}"]`);
    await row.getByRole('button', { name: /Delete/ }).click();
    await row.waitFor({ state: 'detached' });
    await s.get(`/v1/watermarks/${markId}`).expect(404);
    const videos = (await s.get('/v1/videos').expect(200)).body.data as Array<{ watermark_id: string | null }>;
    assert.ok(videos.some((v) => v.watermark_id === markId));
  });
});
