import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { App } from '../../api/app';
import { parseVideoId } from '../../lib/ids';
import { startStack, type Stack } from '../support/stack';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** The count of `vidhost_http_request_duration_seconds` for `POST /beacons` with this status. */
async function beaconPosts(s: Stack, status: string): Promise<number> {
  const text = await (await fetch(s.metricsUrl)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('vidhost_http_request_duration_seconds_count{') && l.includes('method="POST"') && l.includes('route="/beacons"') && l.includes(`status="${status}"`));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Counts the beacons the Koa route took its limit for itself; the fast path spends by consumeNow and hands Koa its own body. */
function countKoaBeacons(app: App): { readonly n: number } {
  const counter = { n: 0 };
  const limiter = app.hot.beaconLimit;
  const consume = limiter.consume.bind(limiter);
  limiter.consume = (key: string) => {
    counter.n++;
    return consume(key);
  };
  return counter;
}

// api/analytics/fast.ts: common beacons answered before Koa (issue 36's ingest ratio).
describe('hot: analytics beacons answered before Koa', function () {
  this.timeout(120_000);
  const LIMIT = 300;
  let s: Stack;
  let koa: { readonly n: number };
  let pub: string;

  const event = (subject: string, viewId = randomUUID(), seq = 0) => ({ view_id: viewId, seq, subject, event: 'viewstart', position: 0, elapsed_ms: 0, watch_ms: 0, player: { name: 'fast', version: '1' } });
  // Each beacon from an address of this file's own, forwarded by a trusted proxy: every stack of
  // the run shares the rate_limits table, and other files' beacons come from 127.0.0.1 too.
  const randomAddress = () => `10.${(Math.random() * 255) | 0}.${(Math.random() * 255) | 0}.${1 + ((Math.random() * 250) | 0)}`;
  const own = randomAddress();
  const beacon = (body: unknown, path = '/v1/beacons', address = own) =>
    request(s.url).post(path).set('Content-Type', 'text/plain').set('User-Agent', UA).set('X-Forwarded-For', address).send(typeof body === 'string' ? body : JSON.stringify(body));
  const stored = async (ids: string[]) => Number((await s.db('analytics_events').whereIn('view_id', ids).count({ n: '*' }))[0].n);
  /** `send` until an answer skips Koa (the route took no limit), at most 5 tries. */
  async function skipsKoa<T>(send: () => Promise<T>): Promise<T> {
    for (let i = 0; i < 5; i++) {
      const before = koa.n;
      const answer = await send();
      if (koa.n === before) return answer;
    }
    assert.fail('5 beacons in a row went through the Koa route: the fast path did not answer');
  }

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ workers: [], env: { ANALYTICS_FLUSH_MS: '60000', ANALYTICS_BEACONS_PER_MINUTE: String(LIMIT), TRUSTED_PROXIES: '127.0.0.1/32' } });
    koa = countKoaBeacons(s.app);
    const { body } = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public' }).expect(201);
    await s.db('videos').where({ id: parseVideoId(body.video_id)! }).update({ duration_seconds: 20 });
    pub = body.video_id;
  });

  it('answers as the Koa route does, header for header, and stores the events', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const first = await beacon(event(pub, ids[0])); // no lease held yet: through Koa, which takes one
    assert.equal(first.status, 204);
    const second = await skipsKoa(() => beacon(event(pub, ids[1])));
    assert.equal(second.status, 204);
    const headers = (r: request.Response) => Object.fromEntries(Object.entries(r.headers).filter(([k]) => !['x-request-id', 'date'].includes(k)));
    assert.deepEqual(headers(second), headers(first));
    assert.deepEqual(Object.keys(second.headers), Object.keys(first.headers), 'in the same order');
    assert.match(second.headers['x-request-id'], /^req_[0-9a-f]{32}$/);
    assert.equal(second.text, '');
    // The other prefixes of SPEC §1.
    await skipsKoa(() => beacon(event(pub, ids[2]), '/beacons').expect(204));
    await skipsKoa(() => beacon(event(pub, ids[3]), '/api/v1/beacons').expect(204));
    await s.app.hot.beacons.flush();
    const rows = await s.db('analytics_events').whereIn('view_id', ids).select('view_id', 'workspace_id', 'viewer_hash', 'browser', 'player');
    assert.equal(rows.length, 4, 'every beacon stored, fast or not');
    for (const r of rows) assert.ok(r.workspace_id && r.viewer_hash && r.browser === 'Chrome' && r.player === 'fast 1', JSON.stringify(r));
  });

  it('counts each answer in the request metrics under the route template', async () => {
    await beacon(event(pub)).expect(204);
    await skipsKoa(async () => {
      const before = await beaconPosts(s, '204');
      for (let i = 0; i < 3; i++) await beacon(event(pub)).expect(204);
      assert.equal(await beaconPosts(s, '204'), before + 3);
    });
  });

  it('hands what it is not sure of to the Koa route with its body: the route\u2019s codes, nothing stored twice', async () => {
    await beacon(event(pub)).expect(204); // a lease held
    const bad = await beacon('{nope').expect(400);
    assert.equal(bad.body.error.code, 'invalid_json');
    assert.equal(bad.headers['access-control-allow-origin'], '*');
    const invalid = await beacon({ ...event(pub), event: 'explode' }).expect(400);
    assert.equal(invalid.body.error.code, 'invalid_beacon');
    assert.ok(invalid.body.error.details.some((d: { path: string }) => d.path === 'event'), JSON.stringify(invalid.body));
    // A body only zod accepts (the hand check leaves unusual shapes to it) is still stored once.
    const id = randomUUID();
    await beacon({ ...event(pub, id), view_id: id.toUpperCase() }).expect(204);
    // An unknown subject: 204, nothing stored.
    const ghost = randomUUID();
    await beacon(event(`vid_${randomUUID().replace(/-/g, '')}`, ghost)).expect(204);
    await s.app.hot.beacons.flush();
    assert.equal(await stored([id]), 1);
    assert.equal(await stored([ghost]), 0);
  });

  it('the limit counts every beacon, fast or not: exactly the limit a minute from an address, then 429', async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const minute = Math.floor(Date.now() / 60_000);
      // A fresh address: its window starts empty (decided as middleware/client.ts decides it).
      const address = randomAddress();
      const before = koa.n;
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT + 5; i++) statuses.push((await beacon(event(pub), '/v1/beacons', address)).status);
      if (Math.floor(Date.now() / 60_000) !== minute) continue; // a new window began mid-test: once more
      const admitted = statuses.filter((x) => x === 204).length;
      assert.equal(admitted, LIMIT, `${admitted} beacons admitted from one address, limit ${LIMIT}`);
      assert.deepEqual(statuses.slice(LIMIT), Array(5).fill(429), 'every beacon past the limit refused');
      assert.ok(koa.n - before < admitted / 2, `${koa.n - before} of ${admitted} admitted beacons went through Koa: most should be fast`);
      const r = await beacon(event(pub), '/v1/beacons', address).expect(429);
      assert.equal(r.body.error.code, 'beacon_rate_limited');
      assert.ok(Number(r.headers['retry-after']) >= 1);
      // Another address is not limited by this one's window.
      await beacon(event(pub), '/v1/beacons', randomAddress()).expect(204);
      return;
    }
    assert.fail('two attempts straddled a minute boundary');
  });
});
