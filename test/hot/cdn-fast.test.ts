import assert from 'node:assert/strict';
import request from 'supertest';
import { monthOf } from '../../lib/playback/bandwidth';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { binary, readyVideo } from '../playback/helpers';

type Video = Awaited<ReturnType<typeof readyVideo>>;

/** The count of `vidhost_http_request_duration_seconds` for GETs of the CDN route answered 200. */
async function cdnGets(s: Stack): Promise<number> {
  const text = await (await fetch(s.metricsUrl)).text();
  const line = text.split('\n').find((l) => l.startsWith('vidhost_http_request_duration_seconds_count{') && l.includes('method="GET"') && l.includes('route="/cdn/v/*rest"') && l.includes('status="200"'));
  return line ? Number(line.split(' ').pop()) : 0;
}

// api/cdn/fast.ts: a plain GET of a segment already in memory is answered before Koa.
describe('hot: CDN segments answered before Koa', function () {
  let s: Stack;
  let pub: Video;
  let priv: Video;
  /** Access decisions the Koa route asked for (the fast path never asks; it only peeks). */
  let resolves = 0;
  const seg = (v: Video) => `/cdn/v/${v.id}/${v.rung}/seg_00000.ts`;
  const get = (path: string, headers: Record<string, string> = {}) => request(s.url).get(path).set(headers).buffer(true).parse(binary);
  /**
   * `send` until its answer skips Koa (no decision asked), at most 5 tries, after a request that
   * filled the caches. A change notified for this video or workspace between two requests rightly
   * sends the next through Koa (which fills the caches again), so one such answer is tolerated;
   * fails when none skipped Koa. (A change anywhere else no longer drops a decision:
   * test/hot/access-cache.test.ts.)
   */
  async function skipsKoa<T>(send: () => Promise<T>): Promise<T> {
    for (let i = 0; i < 5; i++) {
      const before = resolves;
      const answer = await send();
      if (resolves === before) return answer;
    }
    assert.fail('5 answers in a row went through the Koa route: the fast path did not answer');
  }

  before(async function () {
    this.timeout(240_000);
    // A long TTL, so that entries do not lapse between the requests compared here.
    s = await startStack({ env: { CDN_ACCESS_CACHE_MS: '60000' } });
    const clip = await makeClip({ width: 320, height: 180, seconds: 4 });
    [pub, priv] = await Promise.all([readyVideo(s, clip, 'public'), readyVideo(s, clip, 'private')]);
    // Each bandwidth flush notifies the workspace's playback decisions away (they hold its usage),
    // which would send a request compared here through Koa: the meter only counts from now on.
    s.app.hot.meter.stop();
    await s.app.hot.meter.flush();
    await new Promise((r) => setTimeout(r, 500)); // the flush's notification arrives
    const access = s.app.hot.access;
    const resolve = access.resolve.bind(access);
    access.resolve = (ref) => {
      resolves++;
      return resolve(ref);
    };
  });

  it('the second GET skips Koa and answers the same headers and bytes', async () => {
    const before = resolves;
    const first = await get(seg(pub)); // through Koa: fills the access and file caches
    assert.equal(first.status, 200);
    assert.equal(resolves, before + 1, 'the first answer went through the Koa route');
    const second = await skipsKoa(() => get(seg(pub)));
    assert.equal(second.status, 200);
    assert.ok(second.body.equals(first.body), 'the same bytes');
    const headers = (r: request.Response) => Object.fromEntries(Object.entries(r.headers).filter(([k]) => k !== 'x-request-id' && k !== 'date'));
    assert.deepEqual(headers(second), headers(first));
    assert.deepEqual(Object.keys(second.headers), Object.keys(first.headers), 'in the same order');
    assert.match(second.headers['x-request-id'], /^req_[0-9a-f]{32}$/);
    assert.notEqual(second.headers['x-request-id'], first.headers['x-request-id']);
  });

  it('counts each answer in the request metrics and the bandwidth meter', async () => {
    await get(seg(pub));
    // Counted alike through Koa or not; the three of one try all skip Koa.
    await skipsKoa(async () => {
      const [gets, pending] = [await cdnGets(s), s.app.hot.meter.pending(s.ws.id, monthOf())];
      const answers = await Promise.all([1, 2, 3].map(() => get(seg(pub))));
      const bytes = answers.reduce((n, r) => n + r.body.length, 0);
      assert.equal(bytes, 3 * answers[0].body.length);
      assert.equal(await cdnGets(s), gets + 3);
      assert.equal(s.app.hot.meter.pending(s.ws.id, monthOf()), pending + bytes);
    });
  });

  it('ranged, conditional and HEAD requests, and token URLs not yet decided, go through Koa', async () => {
    const full = await get(seg(pub));
    for (const [headers, status] of [
      [{ Range: 'bytes=0-99' }, 206],
      [{ 'If-None-Match': full.headers.etag }, 304],
    ] as const) {
      const before = resolves;
      const r = await get(seg(pub), headers);
      assert.equal(r.status, status);
      assert.equal(resolves, before + 1, JSON.stringify(headers));
    }
    const before = resolves;
    assert.equal((await request(s.url).head(seg(pub))).status, 200);
    assert.equal(resolves, before + 1, 'HEAD');
    // A private video: refused by id through Koa each time; its token URL is decided once, then fast.
    assert.equal((await get(seg(priv))).status, 403);
    assert.equal((await get(seg(priv))).status, 403);
    const { body } = await s.get(`/v1/playback/${priv.id}`);
    const tokenSeg = body.hls_url.replace(/master\.m3u8$/, `${priv.rung}/seg_00000.ts`);
    assert.equal((await request(tokenSeg).get('')).status, 200);
    assert.equal((await skipsKoa(() => request(tokenSeg).get(''))).status, 200);
  });

  it('playlists served as stored skip Koa with the same headers and bytes; a capped token\'s master is rewritten by Koa each time', async () => {
    const headers = (r: request.Response) => Object.fromEntries(Object.entries(r.headers).filter(([k]) => k !== 'x-request-id' && k !== 'date'));
    for (const file of ['master.m3u8', `${pub.rung}/index.m3u8`]) {
      const path = `/cdn/v/${pub.id}/${file}`;
      const first = await get(path);
      assert.equal(first.status, 200, file);
      const second = await skipsKoa(() => get(path));
      assert.equal(second.status, 200, file);
      assert.ok(second.body.equals(first.body), `${file}: the same bytes`);
      assert.deepEqual(headers(second), headers(first), file);
      assert.deepEqual(Object.keys(second.headers), Object.keys(first.headers), `${file}: in the same order`);
      assert.match(second.headers['content-type'], /^application\/vnd\.apple\.mpegurl/);
    }
    const { body } = await s.get(`/v1/playback/${pub.id}?max_resolution=240p`).expect(200);
    const master = await request(body.hls_url).get('').buffer(true).parse(binary);
    assert.equal(master.status, 200);
    for (let i = 0; i < 3; i++) {
      const before = resolves;
      const again = await request(body.hls_url).get('').buffer(true).parse(binary);
      assert.ok(again.body.equals(master.body));
      assert.equal(resolves, before + 1, 'a capped master went through the Koa route');
    }
  });

  it('a video made private stops playing by id at once, also on the fast path', async () => {
    assert.equal((await get(seg(pub))).status, 200);
    assert.equal((await skipsKoa(() => get(seg(pub)))).status, 200, 'fast before the change');
    await s.patch(`/v1/videos/${pub.id}`, { visibility: 'private' }).expect(200);
    const t0 = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - t0 < 5_000) status = (await get(seg(pub))).status;
    assert.equal(status, 403, 'still served 5 s after the change, with a 60 s cache TTL: the push did not reach the fast path');
  });
});
