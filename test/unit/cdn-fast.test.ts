import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { cdnFastPath } from '../../api/cdn/fast';
import type { Deps } from '../../api/deps';
import type { Logger } from '../../lib/logger';
import { monthOf } from '../../lib/playback/bandwidth';
import type { PlaybackGrant } from '../../lib/playback/tokens';
import { compileRestriction, type Restriction } from '../../lib/protection/restriction';

const VIDEO = '01234567-89ab-cdef-0123-456789abcdef';
const ID = `vid_${VIDEO.replace(/-/g, '')}`;

/** The fast path alone, with caches that always hold the answer; false falls to a 599 here. */
async function serve(level: string, plan = 'business', bandwidthBytes = 0, extra: { restriction?: Restriction; grant?: Partial<PlaybackGrant>; encryption?: string } = {}) {
  const lines: string[] = [];
  const recorded: number[] = [];
  const video = { id: VIDEO, workspace_id: 'ws_1', visibility: 'public', status: 'ready', plan, growing: false, bandwidth_bytes: bandwidthBytes, month: monthOf(), restriction: extra.restriction ?? null, encryption: extra.encryption ?? 'none', short_side: 360 };
  const deps = {
    config: { cdnUrl: 'http://localhost:3000/cdn' },
    log: pino({ level }, { write: (s: string) => lines.push(s) }) as unknown as Logger,
    hot: {
      meter: { pending: () => 0, record: (_ws: string, _m: string, n: number) => recorded.push(n) },
      access: { peek: () => ({ kind: 'ok', video, grant: extra.grant ?? null }) },
      files: { peek: () => ({ body: Buffer.from('segment bytes'), etag: '"e1"' }) },
    },
  } as unknown as Deps;
  const fast = cdnFastPath(deps);
  const srv = http.createServer((req, res) => {
    if (!fast(req, res)) res.writeHead(599).end();
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return { url, lines, recorded, close: () => new Promise((r) => srv.close(r)) };
}

describe('unit: CDN fast path (api/cdn/fast.ts)', () => {
  it('answers a plain segment GET and logs the request line at info, token redacted', async () => {
    const s = await serve('info');
    try {
      const r = await fetch(`${s.url}/cdn/v/${ID}/240p/seg_00000.ts?x=1`);
      assert.equal(r.status, 200);
      assert.equal(await r.text(), 'segment bytes');
      assert.equal(r.headers.get('content-type'), 'video/mp2t');
      assert.equal(r.headers.get('etag'), '"e1"');
      const [line] = s.lines.map((l) => JSON.parse(l));
      assert.equal(line.msg, 'request');
      assert.equal(line.req, r.headers.get('x-request-id'));
      assert.deepEqual([line.method, line.status, line.path], ['GET', 200, `/cdn/v/${ID}/240p/seg_00000.ts?x=1`]);
      assert.deepEqual(s.recorded, [13]);
      // A token in the path is not written to the log.
      const token = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
      assert.equal((await fetch(`${s.url}/cdn/v/${token}/240p/seg_00000.ts`)).status, 200);
      assert.doesNotMatch(s.lines[1], /c2lnbmF0dXJl/);
    } finally {
      await s.close();
    }
  });

  it('with info off, no request line', async () => {
    const s = await serve('warn');
    try {
      assert.equal((await fetch(`${s.url}/cdn/v/${ID}/240p/seg_00000.ts`)).status, 200);
      assert.deepEqual(s.lines, []);
    } finally {
      await s.close();
    }
  });

  it('leaves to Koa: other methods and files, Range, If-None-Match, other paths, a Free workspace past its bandwidth', async () => {
    const s = await serve('warn');
    const seg = `${s.url}/cdn/v/${ID}/240p/seg_00000.ts`;
    try {
      for (const [url, init] of [
        [seg, { method: 'HEAD' }],
        [seg, { headers: { Range: 'bytes=0-1' } }],
        [seg, { headers: { 'If-None-Match': '"e1"' } }],
        [`${s.url}/cdn/v/${ID}/thumbnail.jpg`, {}],
        [`${s.url}/cdn/v/${ID}/master.m3u8`, { method: 'HEAD' }],
        [`${s.url}/cdn/v/${ID}/240p/seg_00000.ts/../x`, {}],
        [`${s.url}/v1/cdn/v/${ID}/240p/seg_00000.ts`, {}],
      ] as Array<[string, RequestInit]>) {
        assert.equal((await fetch(url, init)).status, 599, `${init.method ?? 'GET'} ${url} ${JSON.stringify(init.headers ?? {})}`);
      }
    } finally {
      await s.close();
    }
    const free = await serve('warn', 'free', 1e12);
    try {
      assert.equal((await fetch(`${free.url}/cdn/v/${ID}/240p/seg_00000.ts`)).status, 599);
    } finally {
      await free.close();
    }
  });

  it('answers playlists served as stored; leaves to Koa those rewritten per request (a capped master, an encrypted video\'s)', async () => {
    const s = await serve('warn');
    try {
      for (const file of ['master.m3u8', '240p/index.m3u8', 'manifest.mpd']) {
        const r = await fetch(`${s.url}/cdn/v/${ID}/${file}`);
        assert.equal(r.status, 200, file);
        assert.equal(r.headers.get('cache-control'), 'public, max-age=300', file);
        assert.equal(r.headers.get('content-type'), file.endsWith('.mpd') ? 'application/dash+xml' : 'application/vnd.apple.mpegurl');
      }
    } finally {
      await s.close();
    }
    const capped = await serve('warn', 'business', 0, { grant: { maxResolution: 240 } });
    try {
      assert.equal((await fetch(`${capped.url}/cdn/v/${ID}/master.m3u8`)).status, 599, 'the master lists only the rungs within the cap');
      assert.equal((await fetch(`${capped.url}/cdn/v/${ID}/240p/index.m3u8`)).status, 200);
      assert.equal((await fetch(`${capped.url}/cdn/v/${ID}/360p/index.m3u8`)).status, 599);
    } finally {
      await capped.close();
    }
    const encrypted = await serve('warn', 'business', 0, { encryption: 'aes-128', grant: {} });
    try {
      for (const file of ['master.m3u8', '240p/index.m3u8', 'manifest.mpd']) assert.equal((await fetch(`${encrypted.url}/cdn/v/${ID}/${file}`)).status, 599, file);
    } finally {
      await encrypted.close();
    }
  });

  it('checks a restricted video\'s Referer/Origin and a token\'s claims on every request, whatever is cached (SPEC §20)', async () => {
    const restriction = compileRestriction({ id: 'pr_1', allowed_domains: ['*.allowed.example'], allow_no_referrer: false });
    const s = await serve('warn', 'business', 0, { restriction });
    const seg = `${s.url}/cdn/v/${ID}/240p/seg_00000.ts`;
    try {
      const ok = await fetch(seg, { headers: { Referer: 'https://www.allowed.example/x' } });
      assert.equal(ok.status, 200);
      assert.match(ok.headers.get('cache-control') ?? '', /^private/);
      assert.equal((await fetch(seg, { headers: { Origin: 'https://a.allowed.example' } })).status, 200);
      // Refusals are Koa's to answer (403 playback_restricted).
      for (const headers of [{ Referer: 'https://evil.example/' }, { Origin: 'https://evil.example' }, {}, { Referer: 'https://allowed.example/' }] as Array<Record<string, string>>) {
        assert.equal((await fetch(seg, { headers })).status, 599, JSON.stringify(headers));
      }
    } finally {
      await s.close();
    }
    const capped = await serve('warn', 'business', 0, { grant: { maxResolution: 240 } });
    try {
      assert.equal((await fetch(`${capped.url}/cdn/v/${ID}/240p/seg_00000.ts`)).status, 200);
      assert.equal((await fetch(`${capped.url}/cdn/v/${ID}/360p/seg_00000.ts`)).status, 599);
    } finally {
      await capped.close();
    }
    const bound = await serve('warn', 'business', 0, { grant: { ip: '203.0.113.7' } });
    try {
      assert.equal((await fetch(`${bound.url}/cdn/v/${ID}/240p/seg_00000.ts`)).status, 599);
      // No proxy is trusted here: a forwarded address is not believed.
      assert.equal((await fetch(`${bound.url}/cdn/v/${ID}/240p/seg_00000.ts`, { headers: { 'X-Forwarded-For': '203.0.113.7' } })).status, 599);
    } finally {
      await bound.close();
    }
    const here = await serve('warn', 'business', 0, { grant: { ip: '127.0.0.0/8' } });
    try {
      assert.equal((await fetch(`${here.url}/cdn/v/${ID}/240p/seg_00000.ts`)).status, 200);
    } finally {
      await here.close();
    }
  });
});
