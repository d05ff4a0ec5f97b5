import assert from 'node:assert/strict';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { closeContexts, sharedBrowser } from '../support/chromium';
import { startStack, type Stack } from '../support/stack';
import { settled, upload } from './helpers';
import { audioSource, PITCH } from './media';

/**
 * The loudest frequency the page hears from its <video>, Hz: a Web Audio analyser on the element
 * (hls.js feeds it through MSE, a same-origin blob, so nothing is tainted). Each language's track
 * is a sine of its own pitch (test/audio/media.ts).
 */
async function heard(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const w = window as unknown as { vhAnalyser?: AnalyserNode; vhCtx?: AudioContext };
    if (!w.vhAnalyser) {
      const ctx = new AudioContext();
      const source = ctx.createMediaElementSource(document.querySelector('video')!);
      const analyser = ctx.createAnalyser();
      analyser.fftSize = 4096;
      source.connect(analyser);
      analyser.connect(ctx.destination);
      w.vhAnalyser = analyser;
      w.vhCtx = ctx;
    }
    await w.vhCtx!.resume();
    const a = w.vhAnalyser;
    const bins = new Float32Array(a.frequencyBinCount);
    const votes = new Map<number, number>();
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 100));
      a.getFloatFrequencyData(bins);
      let best = 0;
      for (let k = 1; k < bins.length; k++) if (bins[k] > bins[best]) best = k;
      if (bins[best] > -90) {
        const hz = Math.round((best * w.vhCtx!.sampleRate) / a.fftSize / 20) * 20;
        votes.set(hz, (votes.get(hz) ?? 0) + 1);
      }
    }
    return [...votes.entries()].sort((x, y) => y[1] - x[1])[0]?.[0] ?? 0;
  });
}

const near = (hz: number, want: number) => Math.abs(hz - want) <= 30;

describe('Audio: language switching in Chromium (SPEC §19)', function () {
  this.timeout(240_000);
  let s: Stack;
  let browser: Browser;
  let video: Record<string, any>;
  let audioOnly: Promise<Record<string, any>>;

  before(async function () {
    this.timeout(300_000);
    s = await startStack();
    // The audio-only video of the last test processes meanwhile (it was uploaded in that test).
    audioOnly = audioSource('mp3').then((src) => upload(s, src)).then((id) => settled(s, id));
    audioOnly.catch(() => undefined); // awaited in its test
    [video, browser] = await Promise.all([upload(s, await audioSource('twoLangMkv')).then((id) => settled(s, id)), sharedBrowser()]);
    assert.equal(video.status, 'ready', JSON.stringify(video));
  });
  after(async () => {
    await closeContexts(browser);
    await s?.close();
  });

  it('our player: hls.js lists both languages, the menu offers them, and switching makes the other track heard', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${video.embed_url}?autoplay=1&muted=0&loop=1`);
    await page.waitForFunction(() => (window as any).vidhostPlayer?.hls?.audioTracks?.length === 2, null, { timeout: 30_000 });
    const tracks = await page.evaluate(() => (window as any).vidhostPlayer.hls.audioTracks.map((t: { lang: string; name: string; default: boolean }) => [t.lang, t.name, t.default]));
    assert.deepEqual(tracks, [['en', 'English', true], ['fr', 'Français', false]]);
    const options = await page.$$eval('#audio-tracks option', (os) => os.map((o) => [o.textContent, o.getAttribute('lang')]));
    assert.deepEqual(options, [['English', 'en'], ['Français', 'fr']]);
    await page.waitForFunction(() => { const v = document.querySelector('video')!; return !v.paused && v.currentTime > 0.3; }, null, { timeout: 30_000 });
    const before = await heard(page);
    assert.ok(near(before, PITCH.en), `English (${PITCH.en} Hz) heard first, got ${before} Hz`);
    await page.selectOption('#audio-tracks', '1');
    await page.waitForFunction(() => (window as any).vidhostPlayer.hls.audioTrack === 1, null, { timeout: 10_000 });
    let after = 0;
    for (let i = 0; i < 8 && !near(after, PITCH.fr); i++) after = await heard(page);
    assert.ok(near(after, PITCH.fr), `French (${PITCH.fr} Hz) heard after switching, got ${after} Hz`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('Shaka Player lists both languages and switches to the other one', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // A page of the API's own origin (CORS is open on the CDN anyway), with Shaka from node_modules.
    await page.goto(`${s.url}/healthz`);
    await page.setContent('<video id="v" autoplay loop style="width:320px"></video>');
    await page.addScriptTag({ path: path.join(require.resolve('shaka-player'), '..', 'shaka-player.compiled.js') });
    const tracks = await page.evaluate(async (src) => {
      const shaka = (window as any).shaka;
      shaka.polyfill.installAll();
      const player = new shaka.Player();
      await player.attach(document.getElementById('v'));
      (window as any).vhShaka = player;
      await player.load(src);
      return player.getAudioTracks().map((t: { language: string; label: string; active: boolean }) => [t.language, t.label, t.active]);
    }, video.hls_url);
    assert.deepEqual(tracks, [['en', 'English', true], ['fr', 'Français', false]]);
    await page.waitForFunction(() => { const v = document.querySelector('video')!; return !v.paused && v.currentTime > 0.3; }, null, { timeout: 30_000 });
    const before = await heard(page);
    assert.ok(near(before, PITCH.en), `English heard first in Shaka, got ${before} Hz`);
    const active = await page.evaluate(() => {
      const player = (window as any).vhShaka;
      player.selectAudioTrack(player.getAudioTracks().find((t: { language: string }) => t.language === 'fr'));
      return player.getAudioTracks().find((t: { active: boolean }) => t.active).language;
    });
    assert.equal(active, 'fr', "Shaka's active language");
    let after = 0;
    for (let i = 0; i < 8 && !near(after, PITCH.fr); i++) after = await heard(page);
    assert.ok(near(after, PITCH.fr), `French heard after switching in Shaka, got ${after} Hz`);
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('video.js (VHS) lists both languages in audioTracks() and enabling the other one switches what is heard', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // As for Shaka: a page of the API's origin, video.js from node_modules (no CDN). VHS even where
    // the browser could play HLS natively, so the tracks come from VHS's reading of the master.
    await page.goto(`${s.url}/healthz`);
    await page.setContent('<video id="v" class="video-js" autoplay loop width="320"></video>');
    await page.addScriptTag({ path: require.resolve('video.js/dist/video.min.js') });
    await page.evaluate((src) => {
      const player = (window as any).videojs('v', { html5: { vhs: { overrideNative: true } } });
      (window as any).vhVjs = player;
      player.src({ src, type: 'application/x-mpegURL' });
      player.play();
    }, video.hls_url);
    const list = () => page.evaluate(() => Array.from((window as any).vhVjs.audioTracks() as ArrayLike<{ language: string; label: string; enabled: boolean }>).map((t) => [t.language, t.label, t.enabled]));
    await page.waitForFunction(() => (window as any).vhVjs.audioTracks().length === 2, null, { timeout: 30_000 });
    assert.deepEqual(await list(), [['en', 'English', true], ['fr', 'Français', false]]);
    await page.waitForFunction(() => { const v = document.querySelector('video')!; return !v.paused && v.currentTime > 0.3; }, null, { timeout: 30_000 });
    const before = await heard(page);
    assert.ok(near(before, PITCH.en), `English heard first in video.js, got ${before} Hz`);
    await page.evaluate(() => {
      const tracks = (window as any).vhVjs.audioTracks();
      Array.from(tracks as ArrayLike<{ language: string; enabled: boolean }>).find((t) => t.language === 'fr')!.enabled = true;
    });
    assert.deepEqual(await list(), [['en', 'English', false], ['fr', 'Français', true]], 'enabling fr disables en');
    let after = 0;
    for (let i = 0; i < 8 && !near(after, PITCH.fr); i++) after = await heard(page);
    assert.ok(near(after, PITCH.fr), `French heard after switching in video.js, got ${after} Hz`);
    assert.equal(await page.evaluate(() => (window as any).vhVjs.error()), null, 'no player error');
    assert.deepEqual(errors, []);
    await page.close();
  });

  it('an audio-only video gets the audio layout: its waveform, no black picture', async () => {
    const v = await audioOnly;
    const page = await browser.newPage();
    await page.goto(v.embed_url);
    const layout = await page.evaluate(() => {
      const player = document.querySelector('.player')!;
      const img = document.getElementById('waveform') as HTMLImageElement | null;
      const vid = document.querySelector('video')!;
      return { audioOnly: player.classList.contains('audio-only'), waveform: img?.getAttribute('src'), videoHeight: vid.getBoundingClientRect().height, bg: getComputedStyle(vid).backgroundColor };
    });
    assert.equal(layout.audioOnly, true);
    assert.equal(layout.waveform, v.thumbnail_url);
    assert.ok(layout.videoHeight <= 60, `only the controls bar, ${layout.videoHeight}px`);
    assert.equal(layout.bg, 'rgba(0, 0, 0, 0)');
    await page.close();
  });
});
