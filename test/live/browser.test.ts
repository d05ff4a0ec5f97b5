import assert from 'node:assert/strict';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { closeContexts, sharedBrowser } from '../support/chromium';
import { diagnoseLive, hlsPage, type LiveStack, pushRtmp, startLiveStack, waitFor, waitLive } from './helpers';

describe('live: hls.js and Shaka Player in Chromium watch the broadcast', function () {
  this.timeout(200_000);
  let s: LiveStack;
  let browser: Browser;
  let page: Awaited<ReturnType<typeof hlsPage>>;
  before(async () => {
    [s, browser] = await Promise.all([startLiveStack(), sharedBrowser()]);
    page = await hlsPage(s.url);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && s) console.log(`edge log:\n${s.edge.log().slice(-3000)}\nlive:\n${await diagnoseLive(s, s.edge)}`);
  });
  after(async () => {
    await closeContexts(browser);
    page?.close();
    await s?.close();
  });

  it('plays the live ladder near the live edge, with program date times', async () => {
    const ls = (await s.post('/v1/live-streams', { visibility: 'public', latency_mode: 'low' }).expect(201)).body;
    // The encoder outlasts any wait below (it is stopped in finally): under a loaded shard the
    // broadcast can take most of a minute to go active, and a feed that ends mid-test stalls hls.js.
    const push = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 180 });
    const tab = await browser.newPage();
    try {
      await waitLive(s, ls.id);
      // What the page fetched (the last of it goes into a failure's message).
      const net: string[] = [];
      tab.on('response', (r) => net.push(`${r.status()} ${new URL(r.url()).pathname.slice(-48)}`));
      tab.on('requestfailed', (r) => net.push(`failed ${new URL(r.url()).pathname.slice(-48)}: ${r.failure()?.errorText}`));
      const why = async (err: Error) => {
        const seen = await tab.evaluate(() => {
          const v = document.getElementById('v') as HTMLVideoElement;
          const hls = (window as any).hls;
          const d = hls?.latestLevelDetails;
          return {
            t: v.currentTime, ready: v.readyState, paused: v.paused, errors: (window as unknown as { errors: string[] }).errors,
            levels: hls?.levels?.map((l: { height: number }) => l.height), fragments: d?.fragments?.length, parts: d?.partList?.length, live: d?.live,
          };
        });
        // What a player is handed at this moment (the master, then its first variant), and the stream's state.
        const master = await fetch(ls.hls_url).then((r) => r.text()).catch((e: Error) => e.message);
        const first = master.split('\n').find((l) => l && !l.startsWith('#'));
        const variant = first ? await fetch(new URL(first, ls.hls_url)).then((r) => r.text()).catch((e: Error) => e.message) : '';
        return (
          `${err.message}; the player: ${JSON.stringify(seen)}; the encoder ${push.child.exitCode === null ? 'still runs' : `left (${push.child.exitCode}): ${push.stderr().slice(-300)}`}` +
          `\nthe page fetched (last 25):\n${net.slice(-25).join('\n')}\nmaster:\n${master.slice(0, 600)}\nvariant:\n${variant.slice(-1200)}\nlive:\n${await diagnoseLive(s, s.edge)}`
        );
      };
      const playing = () => tab.waitForFunction(() => (document.getElementById('v') as HTMLVideoElement).currentTime > 2, undefined, { timeout: 45_000 });
      await tab.goto(page.url(ls.hls_url));
      // Open defect (docs/live.md, Known limits): in full-suite runs hls.js has sat at readyState 0
      // with the LL-HLS playlists loaded. It is printed, and the page loaded once more, as a viewer
      // would; a second stall fails the test.
      const stalled = await playing().then(() => null, why);
      if (stalled) {
        console.log(`      hls.js did not start; reloading once. ${stalled}`);
        net.length = 0;
        await tab.reload();
        await playing().catch(async (err: Error) => {
          throw new Error(await why(err));
        });
      }
      const samples: number[] = [];
      for (let i = 0; i < 5; i++) {
        samples.push(await tab.evaluate(() => Date.now() - (window as unknown as { hls: { playingDate: Date } }).hls.playingDate.getTime()));
        await new Promise((r) => setTimeout(r, 500));
      }
      const state = await tab.evaluate(() => ({ errors: (window as unknown as { errors: string[] }).errors, w: (document.getElementById('v') as HTMLVideoElement).videoWidth }));
      assert.deepEqual(state.errors, []);
      assert.equal(state.w, 320);
      samples.sort((a, b) => a - b);
      const median = samples[Math.floor(samples.length / 2)];
      if (process.env.LIVE_FIGURES) console.log('glass-to-glass (low, test settings) ms:', samples.join(', '));
      // The test machine is shared: the bound here is loose; bench/live.ts measures properly. The
      // lower bound is below 0: our transcoder stamps EXT-X-PROGRAM-DATE-TIME from its own clock when
      // it joins, and the edge's feed first hands it the cached GOP (up to one keyframe interval of
      // the past), so a stamp can lead the truth by that much (docs/live.md).
      assert.ok(median > -2_500 && median < 15_000, `latency ${median} ms`);
    } finally {
      await tab.close();
      push.stop();
      // The free plan broadcasts one stream at a time, a stream in its reconnect window included.
      await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
      await waitFor('idle', async () => (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.status === 'idle');
    }
  });

  it('Shaka Player plays the live ladder as live, following the edge', async () => {
    const ls = (await s.post('/v1/live-streams', { visibility: 'public' }).expect(201)).body;
    const push = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 60 });
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    try {
      await waitLive(s, ls.id);
      // As in test/audio/browser.test.ts: a page of the API's origin, Shaka from node_modules.
      await tab.goto(`${s.url}/healthz`);
      await tab.setContent('<video id="v" muted autoplay style="width:320px"></video>');
      await tab.addScriptTag({ path: path.join(require.resolve('shaka-player'), '..', 'shaka-player.compiled.js') });
      const live = await tab.evaluate(async (src) => {
        const w = window as any;
        w.shaka.polyfill.installAll();
        const player = new w.shaka.Player();
        w.shakaErrors = [];
        player.addEventListener('error', (e: { detail: { code: number } }) => w.shakaErrors.push(e.detail.code));
        await player.attach(document.getElementById('v'));
        w.vhShaka = player;
        await player.load(src);
        return player.isLive();
      }, ls.hls_url);
      assert.equal(live, true, 'Shaka does not see a live presentation');
      await tab.waitForFunction(() => { const v = document.getElementById('v') as HTMLVideoElement; return !v.paused && v.currentTime > 2; }, undefined, { timeout: 45_000 });
      const edge = () => tab.evaluate(() => (window as any).vhShaka.seekRange().end as number);
      const e1 = await edge();
      await tab.waitForFunction((e) => (window as any).vhShaka.seekRange().end > e + 1, e1, { timeout: 20_000 });
      const state = await tab.evaluate(() => ({ errors: (window as any).shakaErrors as number[], w: (document.getElementById('v') as HTMLVideoElement).videoWidth, t: (document.getElementById('v') as HTMLVideoElement).currentTime, end: (window as any).vhShaka.seekRange().end as number }));
      assert.deepEqual(state.errors, []);
      assert.deepEqual(errors, []);
      assert.equal(state.w, 320);
      assert.ok(state.end - state.t < 15, `Shaka plays ${state.end - state.t} s behind the live edge`);
    } finally {
      await tab.close();
      push.stop();
    }
  });
});
