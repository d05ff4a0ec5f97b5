import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { type App, createApp } from '../../api/app';
import { parseVideoId } from '../../lib/ids';
import { createLogger } from '../../lib/logger';
import { startStack, type Stack, type Workspace } from '../support/stack';

/** The count of `vidhost_http_request_duration_seconds` for `GET <route>` answered 200. */
async function routeGets(s: Stack, route: string): Promise<number> {
  const text = await (await fetch(s.metricsUrl)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('vidhost_http_request_duration_seconds_count{') && l.includes('method="GET"') && l.includes(`route="${route}"`) && l.includes('status="200"'));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Counts the reads the Koa route asked of a process's read cache; the fast path only peeks. */
function countKoaReads(app: App): { readonly n: number } {
  const counter = { n: 0 };
  const reads = app.hot.reads;
  const get = reads.get.bind(reads);
  reads.get = (...args) => {
    counter.n++;
    return get(...args);
  };
  return counter;
}

// api/videos/fast.ts: keyed GET /videos/{id} and GET /videos answered before Koa from memory.
describe('hot: keyed video reads answered before Koa', function () {
  this.timeout(120_000);
  const LIMIT = 200;
  let s: Stack;
  let koa: { readonly n: number };

  /** A ready video made straight in the rows, as the workers leave one (no workflow to ask). */
  const readyVideo = async (ws: Workspace, title: string): Promise<{ id: string; uuid: string }> => {
    const init = await s.post('/v1/upload/init', { filename: `${title}.mp4`, size: 1000, content_type: 'video/mp4' }, ws.fullKey).expect(201);
    const uuid = parseVideoId(init.body.video_id)!;
    await s.db('videos').where({ id: uuid }).update({ status: 'ready', title, ready_at: new Date() });
    return { id: init.body.video_id, uuid };
  };
  const get = (path: string, key: string, base = s.url) => request(base).get(path).set('Authorization', `Bearer ${key}`);
  /** `send` until an answer skips Koa (no read asked of the cache), at most 5 tries; fails when none did. */
  async function skipsKoa<T>(send: () => Promise<T>, counter = koa): Promise<T> {
    for (let i = 0; i < 5; i++) {
      const before = counter.n;
      const answer = await send();
      if (counter.n === before) return answer;
    }
    assert.fail('5 answers in a row went through the Koa route: the fast path did not answer');
  }

  before(async function () {
    this.timeout(240_000);
    // A long read-cache TTL: only pushed invalidations can explain a fresh answer. A low rate
    // limit, so that the limiter's count is observable.
    s = await startStack({ workers: [], env: { READ_CACHE_MS: '600000', RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    koa = countKoaReads(s.app);
  });

  it('the second GET of a video and of a list page skips Koa and answers the same headers and bytes', async () => {
    const ws = await s.newWorkspace('business');
    const v = await readyVideo(ws, 'same');
    for (const path of [`/v1/videos/${v.id}`, '/v1/videos?limit=20']) {
      const before = koa.n;
      const first = await get(path, ws.readKey); // through Koa: fills the read cache
      assert.equal(first.status, 200, path);
      assert.equal(koa.n, before + 1, `${path}: the first answer went through Koa`);
      const second = await skipsKoa(() => get(path, ws.readKey));
      assert.equal(second.status, 200, path);
      assert.equal(second.text, first.text, `${path}: the same bytes`);
      const headers = (r: request.Response) => Object.fromEntries(Object.entries(r.headers).filter(([k]) => !['x-request-id', 'date', 'x-ratelimit-remaining', 'x-ratelimit-reset'].includes(k)));
      assert.deepEqual(headers(second), headers(first), path);
      assert.deepEqual(Object.keys(second.headers), Object.keys(first.headers), `${path}: in the same order`);
      assert.match(second.headers['x-request-id'], /^req_[0-9a-f]{32}$/);
      assert.notEqual(second.headers['x-request-id'], first.headers['x-request-id']);
      assert.ok(Number(second.headers['x-ratelimit-remaining']) < Number(first.headers['x-ratelimit-remaining']), `${path}: the limiter counted it`);
      assert.ok(Math.abs(Number(second.headers['x-ratelimit-reset']) - Number(first.headers['x-ratelimit-reset'])) <= 60);
      // The other prefixes of SPEC §1 read the same entry.
      for (const other of [path.replace('/v1/', '/api/v1/'), path.replace('/v1/', '/')]) {
        assert.equal((await skipsKoa(() => get(other, ws.readKey))).text, first.text, other);
      }
    }
  });

  it('counts each answer in the request metrics under the route template', async () => {
    const ws = await s.newWorkspace('business');
    const v = await readyVideo(ws, 'metrics');
    await get(`/v1/videos/${v.id}`, ws.fullKey).expect(200);
    await skipsKoa(async () => {
      const before = await routeGets(s, '/videos/:id');
      for (let i = 0; i < 3; i++) await get(`/v1/videos/${v.id}`, ws.fullKey).expect(200);
      assert.equal(await routeGets(s, '/videos/:id'), before + 3);
    });
  });

  it('the limiter counts every request: exactly the limit is admitted in a minute, then 429 with its headers', async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const ws = await s.newWorkspace('business');
      const minute = Math.floor(Date.now() / 60_000);
      const v = await readyVideo(ws, 'limited'); // the init is one request of the key
      const before = koa.n;
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT + 10; i++) {
        const r = await get(`/v1/videos/${v.id}`, ws.fullKey);
        statuses.push(r.status);
        assert.ok(r.headers['x-ratelimit-limit'] === String(LIMIT) && r.headers['x-ratelimit-remaining'] !== undefined && r.headers['x-ratelimit-reset'] !== undefined, `answer ${i}: rate-limit headers`);
        if (r.status === 429) assert.ok(Number(r.headers['retry-after']) >= 1);
      }
      if (Math.floor(Date.now() / 60_000) !== minute) continue; // a new window began mid-test: once more
      const admitted = statuses.filter((x) => x === 200).length;
      assert.equal(admitted, LIMIT - 1, `${admitted} reads admitted beside the init, limit ${LIMIT}`);
      assert.deepEqual(statuses.slice(LIMIT - 1), Array(11).fill(429), 'every request past the limit refused');
      assert.ok(koa.n - before < admitted, 'some of the admitted reads were answered by the fast path');
      return;
    }
    assert.fail('two attempts straddled a minute boundary');
  });

  it('another workspace\u2019s key never gets this workspace\u2019s cached answers', async () => {
    const a = await s.newWorkspace('business');
    const b = await s.newWorkspace('business');
    const v = await readyVideo(a, 'mine');
    await readyVideo(b, 'theirs');
    // Both keys and both workspaces' pages cached, A's video read fast.
    await get('/v1/videos?limit=20', b.fullKey).expect(200);
    await get('/v1/videos?limit=20', a.fullKey).expect(200);
    await get(`/v1/videos/${v.id}`, a.fullKey).expect(200);
    await skipsKoa(() => get(`/v1/videos/${v.id}`, a.fullKey).expect(200));
    for (let i = 0; i < 5; i++) {
      const r = await get(`/v1/videos/${v.id}`, b.fullKey);
      assert.equal(r.status, 404, 'B read A\u2019s video');
      assert.equal(r.body.error.code, 'not_found');
      const list = await get('/v1/videos?limit=20', b.fullKey).expect(200);
      assert.deepEqual(list.body.data.map((d: { title: string }) => d.title), ['theirs']);
      // By X-API-Key too, and a read-only key of A still reads its own.
      assert.equal((await request(s.url).get(`/v1/videos/${v.id}`).set('X-API-Key', b.readKey)).status, 404);
      assert.equal((await get(`/v1/videos/${v.id}`, a.readKey)).body.title, 'mine');
    }
  });

  it('a PATCH or DELETE is seen by the next read in this process (fast path included)', async () => {
    const ws = await s.newWorkspace('business');
    const v = await readyVideo(ws, 'v0');
    const byId = `/v1/videos/${v.id}`;
    const listTitle = async () => (await get('/v1/videos?limit=3', ws.fullKey).expect(200)).body.data.find((d: { id: string }) => d.id === v.id)?.title;
    for (let i = 1; i <= 5; i++) {
      await get(byId, ws.fullKey).expect(200);
      await get('/v1/videos?limit=3', ws.fullKey).expect(200);
      await skipsKoa(() => get(byId, ws.fullKey).expect(200));
      await skipsKoa(() => get('/v1/videos?limit=3', ws.fullKey).expect(200));
      await s.patch(byId, { title: `v${i}` }, ws.fullKey).expect(200);
      assert.equal((await get(byId, ws.fullKey).expect(200)).body.title, `v${i}`);
      assert.equal(await listTitle(), `v${i}`);
    }
    await s.del(byId, ws.fullKey).expect(204);
    assert.equal((await get(byId, ws.fullKey)).status, 404);
    assert.equal(await listTitle(), undefined);
  });

  it('another API process sees a PATCH and a DELETE within 1 s on its fast path (the notify channel)', async () => {
    // A second app with its own caches and LISTEN connection: only NOTIFY reaches it.
    const other = createApp({ config: s.config, db: s.db, storage: s.storage, temporal: s.temporal, log: createLogger('silent', 'test') });
    const server = http.createServer(other.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const b = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const koaB = countKoaReads(other);
    try {
      const ws = await s.newWorkspace('business');
      const v = await readyVideo(ws, 'before');
      const byId = `/v1/videos/${v.id}`;
      const seen = async (path: string, ok: (r: request.Response) => boolean, what: string) => {
        const t0 = Date.now();
        while (!ok(await get(path, ws.fullKey, b))) {
          assert.ok(Date.now() - t0 < 1000, `process B still shows the old answer 1 s after ${what}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      await get(byId, ws.fullKey, b).expect(200);
      await get('/v1/videos?limit=5', ws.fullKey, b).expect(200);
      assert.equal((await skipsKoa(() => get(byId, ws.fullKey, b), koaB)).body.title, 'before');
      await skipsKoa(() => get('/v1/videos?limit=5', ws.fullKey, b), koaB);
      await s.patch(byId, { title: 'after' }, ws.fullKey).expect(200);
      await seen(byId, (r) => r.body.title === 'after', 'the PATCH');
      await seen('/v1/videos?limit=5', (r) => r.body.data[0]?.title === 'after', 'the PATCH (list)');
      await skipsKoa(() => get(byId, ws.fullKey, b), koaB);
      await s.del(byId, ws.fullKey).expect(204);
      await seen(byId, (r) => r.status === 404, 'the DELETE');
      await seen('/v1/videos?limit=5', (r) => r.body.data.length === 0, 'the DELETE (list)');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await other.close();
    }
  });

  it('leaves to Koa what it does not hold: a wrong key, a wrong scheme, two different keys, HEAD, a query on a read', async () => {
    const ws = await s.newWorkspace('business');
    const v = await readyVideo(ws, 'edge');
    const byId = `/v1/videos/${v.id}`;
    await get(byId, ws.fullKey).expect(200);
    await skipsKoa(() => get(byId, ws.fullKey).expect(200));
    const through = async (send: () => Promise<request.Response>, status: number, what: string) => {
      const before = koa.n;
      const r = await send();
      assert.equal(r.status, status, what);
      return { r, koa: koa.n - before };
    };
    assert.equal((await through(() => request(s.url).get(byId).set('Authorization', `Basic ${ws.fullKey}`), 401, 'Basic')).r.body.error.code, 'unauthorized');
    assert.equal((await through(() => request(s.url).get(byId).set('Authorization', `Bearer ${ws.fullKey}`).set('X-API-Key', ws.readKey), 401, 'two keys')).r.body.error.code, 'unauthorized');
    assert.equal((await through(() => get(byId, `${ws.fullKey}x`), 401, 'a wrong key')).koa, 0);
    assert.equal((await through(() => request(s.url).head(byId).set('Authorization', `Bearer ${ws.fullKey}`), 200, 'HEAD')).koa, 1);
    assert.equal((await through(() => get(`${byId}?x=1`, ws.fullKey), 200, 'a query')).koa, 1);
    assert.equal((await through(() => get(`${byId}?x=%00`, ws.fullKey), 400, 'a NUL in the query')).r.body.error.code, 'invalid_request');
  });
});
