import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import pino from 'pino';
import type { Deps } from '../../api/deps';
import { fastReadRoutes, videoReadFastPath } from '../../api/videos/fast';
import type { Logger } from '../../lib/logger';
import type { KeyIdentity } from '../../lib/keyCache';
import type { Decision } from '../../lib/limits';

const VIDEO = '01234567-89ab-cdef-0123-456789abcdef';
const ID = `vid_${VIDEO.replace(/-/g, '')}`;
const KEY = 'vh_live_secret';
const identity: KeyIdentity = { keyId: 'key_1', workspaceId: 'ws_1', access: 'read', plan: 'business', personId: null };

function routers(extra: (r: { pub: Router; api: Router }) => void = () => undefined) {
  const pub = new Router();
  const api = new Router();
  pub.get('/healthz', () => undefined);
  api.get('/videos', () => undefined);
  api.get('/videos/:id', () => undefined);
  api.patch('/videos/:id', () => undefined);
  extra({ pub, api });
  return { before: [pub, new Router()], api };
}

/** The fast path alone over caches that hold what `held` says; false falls to a 599 here. */
async function serve(held: { tokens?: number; keys?: Record<string, KeyIdentity>; bodies?: Record<string, string> } = {}) {
  const lines: string[] = [];
  const asked: string[] = [];
  const touched: string[] = [];
  let tokens = held.tokens ?? 100;
  const deps = {
    log: pino({ level: 'info' }, { write: (s: string) => lines.push(s) }) as unknown as Logger,
    hot: {
      keys: { peek: (secret: string) => (held.keys ?? { [KEY]: identity })[secret] ?? null },
      reads: {
        peek: (ws: string, key: string) => {
          asked.push(`${ws}|${key}`);
          const body = (held.bodies ?? { [`ws_1|${VIDEO}`]: '{"id":"v"}', 'ws_1|list?limit=20': '{"data":[]}' })[`${ws}|${key}`];
          return body === undefined ? undefined : Buffer.from(body);
        },
      },
      perKey: {
        consumeNow: (key: string): Decision | undefined => {
          assert.equal(key, 'key_1');
          return tokens > 0 ? { allowed: true, limit: 100, remaining: --tokens, resetAt: 1_800_000_000_000 } : undefined;
        },
      },
    },
  } as unknown as Deps;
  const fast = videoReadFastPath(deps, { touch: (keyId) => touched.push(keyId), routers: routers() });
  const srv = http.createServer((req, res) => {
    if (!fast(req, res)) res.writeHead(599).end();
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return { url, lines, asked, touched, tokens: () => tokens, close: () => new Promise((r) => srv.close(r)) };
}

const bearer = { Authorization: `Bearer ${KEY}` };

describe('unit: keyed video reads before Koa (api/videos/fast.ts)', () => {
  it('answers a held read with the limiter\u2019s headers, spends one token, touches the key and logs the request line', async () => {
    const s = await serve();
    try {
      for (const [path, body] of [[`/v1/videos/${ID}`, '{"id":"v"}'], ['/v1/videos?limit=20', '{"data":[]}'], [`/api/v1/videos/${ID.toUpperCase().replace('VID_', 'vid_')}`, '{"id":"v"}'], ['/videos?limit=20', '{"data":[]}']]) {
        const r = await fetch(`${s.url}${path}`, { headers: { 'X-API-Key': ` ${KEY} ` } });
        assert.equal(r.status, 200, path);
        assert.equal(await r.text(), body);
        assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
        assert.equal(r.headers.get('x-ratelimit-limit'), '100');
        assert.equal(r.headers.get('x-ratelimit-remaining'), String(s.tokens()));
        assert.equal(r.headers.get('x-ratelimit-reset'), '1800000000');
      }
      assert.equal(s.tokens(), 96);
      assert.deepEqual(s.touched, ['key_1', 'key_1', 'key_1', 'key_1']);
      const line = JSON.parse(s.lines[0]);
      assert.deepEqual([line.msg, line.method, line.status, line.path, line.key, line.ws], ['request', 'GET', 200, `/v1/videos/${ID}`, 'key_1', 'ws_1']);
      assert.match(line.req, /^req_[0-9a-f]{32}$/);
    } finally {
      await s.close();
    }
  });

  it('reads only the key\u2019s own workspace\u2019s entries', async () => {
    const other: KeyIdentity = { ...identity, keyId: 'key_1', workspaceId: 'ws_2' };
    const s = await serve({ keys: { [KEY]: other } });
    try {
      assert.equal((await fetch(`${s.url}/v1/videos/${ID}`, { headers: bearer })).status, 599);
      assert.deepEqual(s.asked, [`ws_2|${VIDEO}`]);
      assert.equal(s.tokens(), 100, 'nothing spent for a request it does not answer');
    } finally {
      await s.close();
    }
  });

  it('leaves to Koa, spending nothing: no key, a wrong scheme, two keys, an unknown key, a miss, no token, HEAD, odd targets', async () => {
    const s = await serve();
    try {
      const cases: Array<[string, RequestInit]> = [
        [`/v1/videos/${ID}`, {}],
        [`/v1/videos/${ID}`, { headers: { Cookie: 'vh_session=x' } }],
        [`/v1/videos/${ID}`, { headers: { Authorization: `Basic ${KEY}` } }],
        [`/v1/videos/${ID}`, { headers: { ...bearer, 'X-API-Key': 'another' } }],
        [`/v1/videos/${ID}`, { headers: { Authorization: 'Bearer unknown' } }],
        [`/v1/videos/${ID}`, { method: 'HEAD', headers: bearer }],
        [`/v1/videos/${ID}?x=1`, { headers: bearer }],
        [`/v1/videos/${ID}/`, { headers: bearer }],
        [`/v1/videos/vid%5F${ID.slice(4)}`, { headers: bearer }],
        [`/v1/videos/vid_0123`, { headers: bearer }],
        ['/v1/videos?limit=21', { headers: bearer }],
        ['/v1/videos/?limit=20', { headers: bearer }],
        ['/v2/videos?limit=20', { headers: bearer }],
        ['/v1/folders', { headers: bearer }],
      ];
      for (const [path, init] of cases) {
        assert.equal((await fetch(`${s.url}${path}`, init)).status, 599, `${init.method ?? 'GET'} ${path} ${JSON.stringify(init.headers ?? {})}`);
      }
      assert.equal(s.tokens(), 100);
      assert.deepEqual(s.touched, []);
    } finally {
      await s.close();
    }
    const spent = await serve({ tokens: 0 });
    try {
      assert.equal((await fetch(`${spent.url}/v1/videos/${ID}`, { headers: bearer })).status, 599, 'no token held: Koa awaits the limiter');
      assert.deepEqual(spent.touched, []);
    } finally {
      await spent.close();
    }
  });

  it('is on only for routes the Koa chain sends to that one layer', () => {
    assert.deepEqual([...fastReadRoutes(routers())].sort(), ['/videos', '/videos/:id']);
    assert.deepEqual([...fastReadRoutes(routers(({ pub }) => pub.get('/videos/:id', () => undefined)))], ['/videos']);
    assert.deepEqual([...fastReadRoutes(routers(({ api }) => api.use('/videos', async (_ctx, next) => next())))], []);
    assert.deepEqual([...fastReadRoutes(routers(({ api }) => api.get('/:anything', () => undefined)))], ['/videos/:id']);
  });
});
