/**
 * Issue 22 item 8 on this machine, through the real stack with the default render limits
 * (lib/config/): a key holder's on-demand thumbnail (a cache miss) alone, then while 12
 * distinct anonymous animated GIFs of another tenant's video arrive at once, for a few rounds;
 * and what the burst got (200 / 429 / 503) and how long its last answer took.
 * `npm run bench:renders -- --seconds 20 --rounds 3`. The machine is shared: read the figures as rough.
 */
import { performance } from 'node:perf_hooks';
import { allRenditionsReady, waitForVideo } from '../test/support/flow';
import { makeClip } from '../test/support/media';
import { startStack, type Stack } from '../test/support/stack';
import { BURST_ENV, burstPaths, cdnGet, uploadAs } from '../test/outputs/helpers';
import { runMain } from '../test/support/main';
import { arg } from './args';


async function main(): Promise<void> {
  const seconds = arg('seconds', 20);
  const rounds = arg('rounds', 3);
  const s = await startStack({ env: BURST_ENV });
  const other = await s.newWorkspace();
  const clip = await makeClip({ width: 1280, height: 720, seconds });
  const [a, b] = await Promise.all([uploadAs(s, s.ws, clip, { visibility: 'public' }), uploadAs(s, other, clip, { visibility: 'public' })]);
  const wait = (id: string, key: string) => waitForVideo({ ...s, get: (p: string) => s.get(p, key) } as Stack, id, allRenditionsReady, 30 * 60_000);
  await Promise.all([wait(a, s.ws.fullKey), wait(b, other.fullKey)]);
  const key = { Authorization: `Bearer ${other.fullKey}` };
  const thumb = async (t: number) => {
    const t0 = performance.now();
    const r = await cdnGet(s, `/v/${b}/thumbnail.jpg?time=${t}&width=640`, key);
    if (r.status !== 200) throw new Error(`thumbnail ${r.status}: ${r.body}`);
    return performance.now() - t0;
  };
  console.log(`source ${seconds} s 1280x720; limits ${JSON.stringify(BURST_ENV)}`);
  console.log(`key holder's thumbnail alone (cache miss): ${(await thumb(1)).toFixed(0)} ms`);
  for (let round = 0; round < rounds; round++) {
    // Rounds within one minute find the address budget spent: later bursts are refused outright.
    const t0 = performance.now();
    const paths = burstPaths(a).map((p) => p.replace('fps=10', `fps=${10 + round}`));
    const burst = Promise.all(paths.map((p) => cdnGet(s, p).then((r) => ({ status: r.status, ms: performance.now() - t0 }))));
    await new Promise((r) => setTimeout(r, 150));
    const ms = await thumb(2 + round);
    const answers = await burst;
    const count = (st: number) => answers.filter((x) => x.status === st).length;
    console.log(
      `round ${round + 1}: key holder's thumbnail during the burst ${ms.toFixed(0)} ms; burst 200×${count(200)} 429×${count(429)} 503×${count(503)}, last answer after ${Math.max(...answers.map((x) => x.ms)).toFixed(0)} ms`,
    );
  }
  console.log(`queue bound: ${BURST_ENV.RENDER_ANONYMOUS_CONCURRENCY} anonymous render running + ${BURST_ENV.RENDER_QUEUE_MAX} waiting per lane, ${BURST_ENV.RENDER_CONCURRENCY} slots in all`);
}

runMain(main);
