import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Stack } from '../support/stack';

/**
 * A customer's page on another origin (`http://localhost:P/`): Shaka Player from npm and the SDK
 * from `{base_url}/sdk/analytics.js`, playing `subject`'s master in a `<video>` styled `style`.
 * `configure` runs before the SDK attaches, `loaded` after the load and before `play()`; a
 * failure shows as `error <code>` in the title.
 */
export async function shakaSdkSite(s: Stack, subject: string, opts: { style: string; configure?: string; loaded?: string }): Promise<{ url: string; close: () => void }> {
  const shaka = fs.readFileSync(require.resolve('shaka-player/dist/shaka-player.compiled.js'));
  const master = `${s.config.cdnUrl}/v/${subject}/master.m3u8`;
  const site = http.createServer((req, res) => {
    if (req.url === '/shaka.js') {
      res.setHeader('Content-Type', 'application/javascript');
      return res.end(shaka);
    }
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.end(`<!doctype html><video id="v" muted playsinline style="${opts.style}"></video>
<script src="/shaka.js"></script><script src="${s.url}/sdk/analytics.js"></script>
<script>
  shaka.polyfill.installAll();
  const video = document.getElementById('v');
  const player = new shaka.Player();
  ${opts.configure ?? ''}
  window.tracker = vidhostAnalytics.attach(player, { subject: ${JSON.stringify(subject)}, video });
  player.attach(video).then(() => player.load(${JSON.stringify(master)})).then(() => {
    ${opts.loaded ?? ''}
    return video.play();
  }).catch((e) => { document.title = 'error ' + (e.code || e.message); });
</script>`);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  return { url: `http://localhost:${(site.address() as AddressInfo).port}/`, close: () => site.close() };
}
