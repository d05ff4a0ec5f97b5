import assert from 'node:assert/strict';
import { recordDerived } from '../../lib/outputs/derived';
import { outputKeys } from '../../lib/outputs/keys';
import { allRenditionsReady, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack, type Workspace } from '../support/stack';
import { BURST_ENV, burstPaths, cdnGet, probeBytes, uploadAs } from './helpers';

/**
 * Issue 22 item 8: an anonymous burst of distinct renders is bounded (budgets, a bounded queue,
 * Retry-After) and cannot starve a key holder's thumbnail.
 */
describe('Outputs: render amplification is bounded (issue 22)', function () {
  this.timeout(240_000);
  let s: Stack;
  let other: Workspace;
  let target: Record<string, any>;
  let own: Record<string, any>;

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ env: BURST_ENV });
    other = await s.newWorkspace();
    const clip = await makeClip({ width: 640, height: 360, seconds: 8 });
    const [a, b] = await Promise.all([uploadAs(s, s.ws, clip, { visibility: 'public' }), uploadAs(s, other, clip, { visibility: 'public' })]);
    const wait = (id: string, ws: Workspace) => waitForVideo({ ...s, get: (p: string) => s.get(p, ws.fullKey) } as Stack, id, allRenditionsReady, 200_000);
    [target, own] = await Promise.all([wait(a, s.ws), wait(b, other)]);
  });

  it('12 distinct anonymous animated GIFs: some refused with 429/503 + Retry-After; a key holder’s thumbnail meanwhile ≤ 3 s', async () => {
    const token = (await s.get(`/v1/playback/${own.id}`, other.fullKey).expect(200)).body.token as string;
    // The same kind of request (a cache miss) with nothing else rendering: the machine's own pace.
    const alone0 = performance.now();
    await cdnGet(s, `/v/${token}/thumbnail.jpg?time=1&width=320`).expect(200);
    const aloneBefore = performance.now() - alone0;
    const t0 = performance.now();
    const burst = Promise.all(burstPaths(target.id).map((p) => cdnGet(s, p).then((r) => ({ r, ms: performance.now() - t0 }))));
    // Once the burst is in: the other tenant's thumbnails, by playback token and by API key.
    await new Promise((r) => setTimeout(r, 150));
    const timed = async (p: string, headers: Record<string, string> = {}) => {
      const start = performance.now();
      const r = await cdnGet(s, p, headers);
      return { r, ms: performance.now() - start };
    };
    const byToken = await timed(`/v/${token}/thumbnail.jpg?time=3&width=320`);
    const byKey = await timed(`/v/${own.id}/thumbnail.webp?time=5&width=200`, { Authorization: `Bearer ${other.fullKey}` });
    const answers = await burst;
    // The machine's pace again once the burst is answered: the shard's other suites load it
    // unevenly, so one measure before the burst can fall in a lull that the burst did not.
    const after0 = performance.now();
    await cdnGet(s, `/v/${token}/thumbnail.jpg?time=2&width=320`).expect(200);
    const alone = Math.max(aloneBefore, performance.now() - after0);

    const codes = answers.map(({ r }) => (r.status === 200 ? 200 : `${r.status} ${JSON.parse(r.body.toString()).error.code}`));
    console.log(`      burst answers: ${codes.join(', ')}; last after ${Math.max(...answers.map((a) => a.ms)).toFixed(0)} ms`);
    console.log(`      key holder's thumbnail during the burst: ${byToken.ms.toFixed(0)} ms (token), ${byKey.ms.toFixed(0)} ms (API key); alone: ${alone.toFixed(0)} ms`);

    assert.equal(byToken.r.status, 200, byToken.r.body.toString());
    assert.equal(byKey.r.status, 200, byKey.r.body.toString());
    assert.equal((await probeBytes(byToken.r.body, 'jpg')).streams[0].width, 320);
    // The bound is 3 s (before: 9.8–11.5 s, 23 s here). Measured 1.1–2.3 s on a busy
    // 2-core machine; a machine so loaded that one render alone (the slower of the measures
    // before and after the burst) takes over 1.5 s gets twice that.
    const bound = Math.max(3000, 2 * alone);
    assert.ok(byToken.ms <= bound, `key holder's thumbnail took ${byToken.ms.toFixed(0)} ms (token), bound ${bound.toFixed(0)} ms`);
    assert.ok(byKey.ms <= bound, `key holder's thumbnail took ${byKey.ms.toFixed(0)} ms (API key), bound ${bound.toFixed(0)} ms`);

    const refused = answers.filter(({ r }) => r.status !== 200);
    assert.ok(refused.length >= 6, `the per-address budget (6 a minute) refuses at least 6 of 12: ${codes.join(', ')}`);
    for (const { r } of refused) {
      assert.ok(r.status === 429 || r.status === 503, `refused with 429/503, not ${r.status}`);
      assert.ok(Number(r.headers['retry-after']) >= 1, 'with Retry-After');
      // render_timeout too: anonymous renders run niced, so on a loaded machine one that waited
      // in the queue may pass its 30 s (counted from queueing) and is refused, not left hanging.
      const code = JSON.parse(r.body.toString()).error.code;
      assert.ok(['render_rate_limited', 'render_queue_full', 'render_timeout'].includes(code), code);
    }
    assert.ok(codes.includes('429 render_rate_limited'));
    assert.ok(codes.includes('503 render_queue_full'), 'the anonymous queue (4) is bounded');
    for (const { r } of answers.filter((a) => a.r.status === 200)) assert.equal(r.headers['content-type'], 'image/gif');
  });

  it('derived images count in the workspace’s storage', async () => {
    const keys = await s.storage.list(outputKeys.derived(s.ws.id, target.uuid, ''));
    assert.ok(keys.length > 0);
    let bytes = 0;
    for (const k of keys) bytes += (await s.storage.head(k))!.size;
    const ws = await s.db('workspaces').where({ id: s.ws.id }).first('storage_used_bytes');
    const videos = await s.db('videos').where({ workspace_id: s.ws.id }).whereNull('deleted_at').sum('size_bytes as n').first();
    assert.equal(Number(ws.storage_used_bytes) - Number(videos!.n), bytes, 'the workspace counts every derived byte');
  });

  it('past the per-video cap, the video’s derived folder is evicted and the count restarts', async () => {
    const used = async () => Number((await s.db('workspaces').where({ id: s.ws.id }).first('storage_used_bytes')).storage_used_bytes);
    const row = await s.db('videos').where({ id: target.uuid }).first('derived_bytes');
    const before = await used();
    assert.ok(Number(row.derived_bytes) > 0);
    const video = { workspaceId: s.ws.id, id: target.uuid };
    const key = outputKeys.derived(s.ws.id, target.uuid, 'thumbnail_t0_w8_h0_preserve.jpg');
    // A 10-byte file under a cap the folder already fills: everything else goes first.
    await recordDerived(s.db, s.storage, video, 10, Number(row.derived_bytes), () => s.storage.put(key, Buffer.alloc(10), { contentType: 'image/jpeg' }));
    assert.deepEqual(await s.storage.list(outputKeys.derived(s.ws.id, target.uuid, '')), [key]);
    assert.equal(Number((await s.db('videos').where({ id: target.uuid }).first('derived_bytes')).derived_bytes), 10);
    assert.equal(await used(), before - Number(row.derived_bytes) + 10, 'the workspace stops counting what was evicted');
  });

  it('parameters are rounded so nearby requests share the cache', async () => {
    const first = await cdnGet(s, `/v/${own.id}/thumbnail.jpg?time=4.02&width=100`, { Authorization: `Bearer ${other.fullKey}` }).expect(200);
    assert.equal(first.headers['x-render-cache'], 'miss');
    const near = await cdnGet(s, `/v/${own.id}/thumbnail.jpg?time=3.98&width=100`, { Authorization: `Bearer ${other.fullKey}` }).expect(200);
    assert.equal(near.headers['x-render-cache'], 'hit', 'time rounds to 0.1 s');
    const gif = await cdnGet(s, `/v/${own.id}/animated.gif?start=1.01&end=1.99&fps=5&width=203`, { Authorization: `Bearer ${other.fullKey}` }).expect(200);
    const same = await cdnGet(s, `/v/${own.id}/animated.gif?start=0.96&end=2.04&fps=5&width=198`, { Authorization: `Bearer ${other.fullKey}` }).expect(200);
    assert.equal(same.headers['x-render-cache'], 'hit');
    assert.deepEqual(same.body, gif.body);
    assert.equal((await probeBytes(gif.body, 'gif')).streams[0].width, 200, 'animated widths round to a multiple of 8');
  });
});
