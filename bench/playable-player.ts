// bench/playable.ts's players: hls.js and Shaka Player (from node_modules) in Debian's Chromium,
// loaded right after `ready`, seeking to the last minute at once; what the viewer gets: the first
// frame presented at the seek target (requestVideoFrameCallback: a frame on screen, not a
// buffered byte) and the height of the rendition it came from.
import path from 'node:path';
import type { Browser } from 'playwright-core';

/**
 * `shaka` starts at the variant its bandwidth estimate allows (navigator.connection.downlink,
 * else 1 Mb/s; headless Chromium reports little); `shaka-10m` is told 10 Mb/s
 * (`abr.defaultBandwidthEstimate`, without the Network Information API), a fast link.
 */
export type PlayerName = 'hls.js' | 'shaka' | 'shaka-10m';

export type SeekResult = {
  player: PlayerName;
  /** From the seek to the first frame presented at (or after) the target. */
  ttffMs: number;
  /** videoHeight of that frame's rendition, then of what plays 3 s later. */
  height: number;
  heightLater: number;
  target: number;
};

/**
 * A page of `origin` (the CDN answers CORS anyway) playing `hlsUrl` with `player`: as soon as the
 * duration is known (the media playlist is loaded) it seeks to duration − 60 s.
 */
export async function seekToLastMinute(browser: Browser, origin: string, hlsUrl: string, player: PlayerName, timeoutMs = 60_000): Promise<SeekResult> {
  const page = await browser.newPage();
  // PLAYABLE_TRACE=1: each media request's start and end, ms from page load, to see where a seek's time goes.
  const trace: string[] = [];
  const t0 = Date.now();
  const note = (what: string) => process.env.PLAYABLE_TRACE && trace.push(`${String(Date.now() - t0).padStart(6)} ${what}`);
  const file = (r: { url(): string }) => new URL(r.url()).pathname.split('/').slice(-2).join('/');
  if (process.env.PLAYABLE_TRACE) {
    page.on('request', (r) => note(`> ${file(r)}`));
    page.on('requestfinished', (r) => note(`< ${file(r)}`));
    page.on('requestfailed', (r) => note(`x ${file(r)} ${r.failure()?.errorText}`));
    page.on('console', (m) => note(`console ${m.text()}`));
  }
  try {
    await page.goto(`${origin}/healthz`);
    await page.setContent('<video id="v" muted autoplay playsinline style="width:640px"></video>');
    const script = player === 'hls.js' ? require.resolve('hls.js/dist/hls.min.js') : path.join(require.resolve('shaka-player'), '..', 'shaka-player.compiled.js');
    await page.addScriptTag({ path: script });
    await page.evaluate(
      async ({ src, which }) => {
        const w = window as any;
        const v = document.getElementById('v') as HTMLVideoElement;
        if (which === 'hls.js') {
          const hls = new w.Hls({ enableWorker: true });
          hls.loadSource(src);
          hls.attachMedia(v);
          w.player = hls;
        } else {
          w.shaka.polyfill.installAll();
          const p = new w.shaka.Player();
          if (which === 'shaka-10m') p.configure({ abr: { defaultBandwidthEstimate: 10_000_000, useNetworkInformation: false } });
          await p.attach(v);
          await p.load(src);
          w.player = p;
        }
      },
      { src: hlsUrl, which: player },
    );
    await page.waitForFunction(() => (document.getElementById('v') as HTMLVideoElement).duration > 60, undefined, { timeout: timeoutMs });
    // Shaka applies its start position with the first frame; a seek before that is undone.
    if (player !== 'hls.js') await page.waitForFunction(() => (document.getElementById('v') as HTMLVideoElement).readyState >= 2, undefined, { timeout: timeoutMs });
    // A string, not a function: the bench's compiler names arrow functions with a helper the page lacks.
    const seek = `new Promise((resolve, reject) => {
      const v = document.getElementById('v');
      const target = v.duration - 60;
      const t0 = performance.now();
      v.currentTime = target;
      v.play().catch(() => undefined);
      const timer = setTimeout(() => reject(new Error('no frame at ' + target + ' s after ${timeoutMs} ms (at ' + v.currentTime + ' s, readyState ' + v.readyState + ')')), ${timeoutMs});
      const onFrame = (now, meta) => {
        // A frame of the new position, once the seek is done (not the old frame shown again).
        if (v.seeking || meta.mediaTime < target - 0.5 || meta.mediaTime > target + 10) return void v.requestVideoFrameCallback(onFrame);
        clearTimeout(timer);
        const height = v.videoHeight;
        const ttffMs = Math.round(now - t0);
        setTimeout(() => resolve({ player: ${JSON.stringify(player)}, ttffMs, height, heightLater: v.videoHeight, target }), 3000);
      };
      v.requestVideoFrameCallback(onFrame);
    })`;
    note('seek');
    const r = (await page.evaluate(seek)) as SeekResult;
    if (trace.length) console.log(`  trace (${player}, first frame ${r.ttffMs} ms after the seek):\n${trace.map((l) => `    ${l}`).join('\n')}`);
    return r;
  } finally {
    await page.close();
  }
}
