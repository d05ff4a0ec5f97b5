import assert from 'node:assert/strict';
import fs from 'node:fs';
import { spawnWorker } from '../support/child';
import { isStatus, waitForVideo } from '../support/flow';
import { startStack, type Stack } from '../support/stack';
import { sendPadded, serve } from './helpers';

const GiB = 1024 ** 3;
const RSS_LIMIT = 300 * 1024 * 1024;

function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

describe('URL import memory', function () {
  let s: Stack;
  let worker: ReturnType<typeof spawnWorker>;
  before(async function () {
    this.timeout(120_000);
    // The transcode queue (where the import runs) is served only by the child, so its RSS is the import's.
    s = await startStack({ workers: ['workflow'] });
    worker = spawnWorker(s.env, 'transcode');
  });
  after(async () => worker?.kill());

  it('streams a 1 GiB download to storage with the worker under 300 MB RSS', async function () {
    this.timeout(120_000);
    // Generated on the fly: an ftyp box (it passes the sniff) then zeros; no file on disk.
    const { url } = await serve({ '/huge.mp4': sendPadded(GiB, true) });
    const r = await s.post('/v1/upload/from-url', { workspace_id: s.ws.id, url: `${url}/huge.mp4` });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const id = r.body.data.video_id;
    const pid = worker.child.pid!;
    let peak = 0;
    const samples: number[] = [];
    const sampler = setInterval(() => {
      const rss = rssBytes(pid);
      samples.push(rss);
      peak = Math.max(peak, rss);
    }, 100);
    let v;
    const t0 = Date.now();
    try {
      // The bytes are not a decodable video, so the probe after the import fails it; what matters is the import.
      v = await waitForVideo(s, id, (x) => x.status === 'failed' || x.status === 'ready', 100_000);
    } finally {
      clearInterval(sampler);
    }
    const seconds = (Date.now() - t0) / 1000;
    assert.equal((await s.storage.head(v.storage_key))?.size, GiB, `the whole GiB was stored (${JSON.stringify(v)}; worker: ${worker.output()})`);
    assert.ok(samples.length > 5, 'RSS was sampled while the import ran');
    assert.ok(peak < RSS_LIMIT, `worker RSS peaked at ${Math.round(peak / 2 ** 20)} MB`);
    console.log(`      1 GiB imported in ${seconds.toFixed(1)} s; worker RSS peak ${Math.round(peak / 2 ** 20)} MB over ${samples.length} samples`);
    assert.equal(v.status, 'failed');
    assert.equal(v.error_code, 'invalid_media');
    // Leave no GiB behind on disk.
    assert.equal((await s.del(`/v1/videos/${id}`)).status, 204);
  });
});
