import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { buildDashboard } from '../../lib/dashboard/build';
import { closeContexts, sharedBrowser } from '../support/chromium';
import { readyVideo } from '../playback/helpers';
import { SCRIPT, spokenClip } from '../support/speech';
import { startStack, type Stack } from '../support/stack';
import { account } from './accounts';

const SHOTS = path.join(__dirname, '..', '..', 'test-output', 'dashboard');

/**
 * The video page's captions from a transcript (issue 37), in Chromium against the real stack: the
 * transcript is uploaded as a file, the track shows `aligning` then `ready`, its cues are listed
 * and its VTT downloads.
 */
describe('Dashboard: captions from a transcript', function () {
  this.timeout(240_000);
  let s: Stack;
  let browser: Browser;
  let page: Page;
  let videoId: string;
  const me = { email: 'captions-owner@example.test', password: 'correct horse battery' };

  before(async function () {
    this.timeout(300_000);
    fs.mkdirSync(SHOTS, { recursive: true });
    s = await startStack();
    const [, clip, b] = await Promise.all([buildDashboard(), spokenClip(SCRIPT, { leadSilence: 1.5 }), sharedBrowser()]);
    browser = b;
    videoId = (await readyVideo(s, clip.file, 'private')).id;
    await account(s, me.email, s.ws.id);
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })).newPage();
  });
  after(async () => closeContexts(browser));

  it('uploads a transcript file, shows the track aligning then ready, lists its cues and downloads the VTT', async () => {
    await page.goto(`${s.url}/dashboard`);
    await page.getByLabel('Email').fill(me.email);
    await page.getByLabel('Password').fill(me.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Videos' }).waitFor();
    await page.goto(`${s.url}/dashboard/videos/${videoId}`);
    const form = page.getByRole('form', { name: 'Captions from a transcript' });
    await form.waitFor();
    await form.locator('input[name="transcript-file"]').setInputFiles({ name: 'script.txt', mimeType: 'text/plain', buffer: Buffer.from(SCRIPT) });
    await page.waitForFunction(() => (document.querySelector('textarea[name="transcript"]') as HTMLTextAreaElement).value.length > 0);
    await form.getByRole('button', { name: 'Make captions' }).click();
    const row = page.locator('li[data-language="en"]');
    await row.filter({ hasText: /aligning|ready/ }).waitFor();
    await row.filter({ hasText: 'ready' }).waitFor({ timeout: 120_000 });
    await row.getByRole('button', { name: 'Show cues' }).click();
    const cells = page.locator('table.cues tbody tr');
    await cells.first().waitFor();
    assert.ok((await cells.count()) >= 5);
    assert.equal(await cells.first().locator('td').nth(2).innerText(), 'Welcome to the studio.');
    // The video is private: the links go through the page's playback token.
    const [download] = await Promise.all([page.waitForEvent('download'), row.getByRole('link', { name: 'Download VTT' }).click()]);
    const file = await download.path();
    assert.ok(file);
    const vtt = fs.readFileSync(file, 'utf8');
    assert.match(vtt, /^WEBVTT/);
    assert.match(vtt, /Welcome to the studio\./);
    await page.screenshot({ path: path.join(SHOTS, 'captions-aligned.png'), fullPage: true });
  });
});
