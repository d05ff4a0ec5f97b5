import assert from 'node:assert/strict';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import request from 'supertest';
import { keys } from '../../lib/storage';
import { monthOf } from '../../lib/playback/bandwidth';
import { makeClip } from '../support/media';
import { waitForVideo } from '../support/flow';
import { startStack, type Stack } from '../support/stack';
import { binary, nowSeconds, playlistUris, readyVideo, secretOf, signToken } from './helpers';

type Video = Awaited<ReturnType<typeof readyVideo>>;

describe('Playback: signed URLs and the CDN', function () {
  let s: Stack;
  let pub: Video;
  let unlisted: Video;
  let priv: Video;
  const cdn = (p: string) => request(s.url).get(`/cdn/v/${p}`).buffer(true).parse(binary);

  before(async function () {
    this.timeout(240_000);
    // These tests change rows behind the API's back and look at once; the access cache (pushed
    // invalidation, test/hot/cdn.test.ts) is off here so that each answer reads the row.
    s = await startStack({ env: { CDN_ACCESS_CACHE_MS: '0' } });
    const clip = await makeClip({ width: 320, height: 180, seconds: 4 });
    // The private one has a ladder of two rungs, so token paths are walked through several renditions.
    const wide = await makeClip({ width: 640, height: 360, seconds: 4 });
    [pub, unlisted, priv] = await Promise.all([readyVideo(s, clip, 'public'), readyVideo(s, clip, 'unlisted'), readyVideo(s, wide, 'private')]);
  });

  describe('GET /playback/{id}', () => {
    it('signs a token for the video and builds URLs around it (read keys allowed)', async () => {
      const r = await s.get(`/v1/playback/${priv.id}`, s.ws.readKey);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(Object.keys(r.body).sort(), ['embed_url', 'expires_at', 'hls_url', 'thumbnail_url', 'token', 'video_id']);
      const { token } = r.body;
      assert.equal(r.body.video_id, priv.id);
      assert.equal(r.body.hls_url, `${s.config.cdnUrl}/v/${token}/master.m3u8`);
      assert.equal(r.body.thumbnail_url, `${s.config.cdnUrl}/v/${token}/thumbnail.jpg`);
      assert.equal(r.body.embed_url, `${s.config.playerUrl}/embed/${priv.id}?token=${token}`);
      assert.deepEqual(decodeProtectedHeader(token), { alg: 'HS256', kid: 'k1' });
      const claims = decodeJwt(token);
      assert.equal(claims.sub, priv.uuid);
      assert.equal(claims.exp! - claims.iat!, 3600);
      assert.equal(r.body.expires_at, new Date(claims.exp! * 1000).toISOString());
      assert.equal(r.headers['cache-control'], 'no-store');
      // Every prefix and the UUID form reach the same endpoint.
      for (const p of [`/playback/${priv.uuid}`, `/api/v1/playback/${priv.id}`]) assert.equal((await s.get(p)).status, 200, p);
    });

    it('takes ?ttl= from 60 to 86400 seconds; anything else is 400 invalid_parameters', async () => {
      for (const ttl of [60, 86_400]) {
        const r = await s.get(`/v1/playback/${pub.id}?ttl=${ttl}`);
        assert.equal(r.status, 200);
        const claims = decodeJwt(r.body.token);
        assert.equal(claims.exp! - claims.iat!, ttl);
      }
      for (const ttl of ['59', '86401', '0', '-5', '1.5', 'abc', '']) {
        const r = await s.get(`/v1/playback/${pub.id}?ttl=${ttl}`);
        assert.equal(r.status, 400, `ttl=${ttl}`);
        assert.equal(r.body.error.code, 'invalid_parameters');
      }
    });

    it('409 not_ready before the video is playable; 404 for unknown and foreign videos; 401 without a key', async () => {
      const init = await s.post('/v1/upload/init', { filename: 'later.mp4', size: 1000, content_type: 'video/mp4' });
      assert.equal(init.status, 201);
      const r = await s.get(`/v1/playback/${init.body.video_id}`);
      assert.equal(r.status, 409);
      assert.equal(r.body.error.code, 'not_ready');
      assert.equal((await s.get('/v1/playback/vid_' + '0'.repeat(32))).status, 404);
      assert.equal((await s.get('/v1/playback/nope')).status, 404);
      const other = await s.newWorkspace();
      assert.equal((await s.get(`/v1/playback/${pub.id}`, other.fullKey)).status, 404);
      assert.equal((await request(s.url).get(`/v1/playback/${pub.id}`)).status, 401);
    });
  });

  describe('access', () => {
    it('public and unlisted videos play by id, without a token', async () => {
      for (const v of [pub, unlisted]) {
        const master = await cdn(`${v.id}/master.m3u8`);
        assert.equal(master.status, 200, v.id);
        assert.equal(master.headers['content-type'], 'application/vnd.apple.mpegurl');
        const [variant] = playlistUris(master.body.toString());
        assert.equal(variant, `${v.rung}/index.m3u8`);
        const index = await cdn(`${v.id}/${variant}`);
        assert.equal(index.status, 200);
        const segments = playlistUris(index.body.toString());
        assert.ok(segments.length >= 1);
        for (const seg of segments) {
          const r = await cdn(`${v.id}/${v.rung}/${seg}`);
          assert.equal(r.status, 200, seg);
          assert.equal(r.headers['content-type'], 'video/mp2t');
          assert.equal(r.body[0], 0x47, 'an MPEG-TS sync byte');
        }
        const thumb = await cdn(`${v.id}/thumbnail.jpg`);
        assert.equal(thumb.status, 200);
        assert.equal(thumb.headers['content-type'], 'image/jpeg');
        assert.deepEqual([...thumb.body.subarray(0, 2)], [0xff, 0xd8], 'a JPEG');
      }
    });

    it('a private video does not play by id; every file is 403 forbidden', async () => {
      for (const f of ['master.m3u8', `${priv.rung}/index.m3u8`, `${priv.rung}/seg_00000.ts`, 'thumbnail.jpg']) {
        const r = await cdn(`${priv.id}/${f}`);
        assert.equal(r.status, 403, f);
        assert.equal(JSON.parse(r.body.toString()).error.code, 'forbidden');
        assert.equal(r.headers['access-control-allow-origin'], '*', 'errors are readable cross-origin');
      }
    });

    it('a private video plays with its token: relative playlist URIs carry it', async () => {
      const { body } = await s.get(`/v1/playback/${priv.id}`);
      const base = body.hls_url.replace(/master\.m3u8$/, '');
      const master = await request(body.hls_url).get('').buffer(true).parse(binary);
      assert.equal(master.status, 200);
      const variants = playlistUris(master.body.toString());
      assert.deepEqual(variants, ['240p/index.m3u8', '360p/index.m3u8']);
      for (const variant of variants) {
        const index = await request(base + variant).get('').buffer(true).parse(binary);
        assert.equal(index.status, 200, variant);
        const dir = variant.replace(/index\.m3u8$/, '');
        for (const seg of playlistUris(index.body.toString())) {
          const r = await request(base + dir + seg).get('').buffer(true).parse(binary);
          assert.equal(r.status, 200, seg);
        }
      }
      assert.equal((await request(body.thumbnail_url).get('')).status, 200);
    });

    it('403 for an expired, tampered or unknown-key token, and for one signed with another secret', async () => {
      const k1 = secretOf(s, 'k1');
      const expired = await signToken(k1, 'k1', { sub: priv.uuid, iat: nowSeconds() - 120, exp: nowSeconds() - 60 });
      const unknownKid = await signToken(k1, 'k9', { sub: priv.uuid, exp: nowSeconds() + 600 });
      const wrongSecret = await signToken(new TextEncoder().encode('not-the-configured-secret'), 'k1', { sub: priv.uuid, exp: nowSeconds() + 600 });
      const good = (await s.get(`/v1/playback/${pub.id}`)).body.token as string;
      const [h, , sig] = good.split('.');
      // A valid signature over the public video's claims, with the claims swapped for the private one.
      const tampered = `${h}.${Buffer.from(JSON.stringify({ sub: priv.uuid, exp: nowSeconds() + 600 })).toString('base64url')}.${sig}`;
      const flipped = good.slice(0, -2) + (good.at(-2) === 'A' ? 'B' : 'A') + good.at(-1);
      for (const [name, token] of Object.entries({ expired, unknownKid, wrongSecret, tampered, flipped })) {
        for (const f of ['master.m3u8', `${priv.rung}/seg_00000.ts`]) {
          const r = await cdn(`${token}/${f}`);
          assert.equal(r.status, 403, `${name} ${f}`);
          assert.equal(JSON.parse(r.body.toString()).error.code, 'forbidden');
        }
      }
      // The hand-made token with the right key works, so the 403s above are about the defects.
      const fine = await signToken(k1, 'k1', { sub: priv.uuid, exp: nowSeconds() + 600 });
      assert.equal((await cdn(`${fine}/master.m3u8`)).status, 200);
    });

    it('404 for deleted and unknown videos, by id and by token', async () => {
      const { token } = (await s.get(`/v1/playback/${unlisted.id}`)).body;
      await s.db('videos').where({ id: unlisted.uuid }).update({ deleted_at: new Date() });
      try {
        assert.equal((await cdn(`${unlisted.id}/master.m3u8`)).status, 404);
        assert.equal((await cdn(`${token}/master.m3u8`)).status, 404);
      } finally {
        await s.db('videos').where({ id: unlisted.uuid }).update({ deleted_at: null });
      }
      assert.equal((await cdn(`vid_${'0'.repeat(32)}/master.m3u8`)).status, 404);
      const ghost = await signToken(secretOf(s, 'k1'), 'k1', { sub: '0190b8a2-0000-7000-8000-000000000000', exp: nowSeconds() + 60 });
      assert.equal((await cdn(`${ghost}/master.m3u8`)).status, 404);
    });

    it('serves only whitelisted file names: no traversal, no other objects', async () => {
      const probes = [
        `${pub.id}/../../../../etc/passwd`,
        `${pub.id}/%2e%2e/%2e%2e/originals/x`,
        `${pub.id}/hls/master.m3u8`,
        `${pub.id}/${pub.rung}/index.m3u8.meta`,
        `${pub.id}/${pub.rung}/seg_0.ts`,
        `${pub.id}/${pub.rung}%2fseg_00000.ts`,
        `${pub.id}/master.m3u8/`,
        `${pub.id}/original.mp4`,
        `${pub.id}/${pub.rung}/seg_99999.ts`,
        `${pub.id}`,
      ];
      for (const p of probes) {
        const r = await cdn(p);
        assert.equal(r.status, 404, p);
        assert.equal(JSON.parse(r.body.toString()).error.code, 'not_found', p);
      }
    });
  });

  describe('HTTP', () => {
    it('answers Range with 206 and the exact bytes, and 416 past the end', async () => {
      const seg = `${pub.id}/${pub.rung}/seg_00000.ts`;
      const full = await cdn(seg);
      assert.equal(full.headers['accept-ranges'], 'bytes');
      const size = full.body.length;
      assert.equal(Number(full.headers['content-length']), size);
      const stored = await s.storage.get(keys.rendition(s.ws.id, pub.uuid, pub.rung) + 'seg_00000.ts');
      assert.equal(stored?.size, size);
      stored?.body.destroy();

      const cases: Array<[string, number, number]> = [
        ['bytes=0-99', 0, 99],
        ['bytes=100-', 100, size - 1],
        ['bytes=-188', size - 188, size - 1],
        [`bytes=${size - 10}-${size + 1000}`, size - 10, size - 1],
      ];
      for (const [header, start, end] of cases) {
        const r = await cdn(seg).set('Range', header);
        assert.equal(r.status, 206, header);
        assert.equal(r.headers['content-range'], `bytes ${start}-${end}/${size}`, header);
        assert.equal(Number(r.headers['content-length']), end - start + 1, header);
        assert.ok(r.body.equals(full.body.subarray(start, end + 1)), header);
      }
      const past = await cdn(seg).set('Range', `bytes=${size}-`);
      assert.equal(past.status, 416);
      assert.equal(past.headers['content-range'], `bytes */${size}`);
      const head = await request(s.url).head(`/cdn/v/${seg}`);
      assert.equal(head.status, 200);
      assert.equal(Number(head.headers['content-length']), size);
      assert.equal(head.headers['content-type'], 'video/mp2t');
    });

    it('answers output files (storyboard) like the HLS files: ETag, 304 on If-None-Match, HEAD and Range', async function () {
      this.timeout(120_000);
      await waitForVideo(s, pub.id, (v) => v.storyboard_url !== null, 100_000);
      const path = `${pub.id}/storyboard.vtt`;
      const full = await cdn(path).expect(200);
      const etag = full.headers.etag;
      assert.match(etag, /^(W\/)?"[^"]+"$/);
      assert.match(full.headers['access-control-expose-headers'], /\bETag\b/);
      const again = await cdn(path).set('If-None-Match', etag);
      assert.equal(again.status, 304);
      assert.equal(again.headers.etag, etag);
      assert.equal(again.body.length, 0);
      assert.equal((await cdn(path).set('If-None-Match', '"something-else"')).status, 200);
      const head = await request(s.url).head(`/cdn/v/${path}`).expect(200);
      assert.equal(head.headers.etag, etag);
      assert.equal(Number(head.headers['content-length']), full.body.length);
      const part = await cdn(path).set('Range', 'bytes=0-5').expect(206);
      assert.equal(part.headers['content-range'], `bytes 0-5/${full.body.length}`);
      assert.equal(part.headers.etag, etag);
    });

    it('CORS: any origin may GET, read the range headers, and preflight', async () => {
      const r = await cdn(`${pub.id}/master.m3u8`).set('Origin', 'https://example.com');
      assert.equal(r.headers['access-control-allow-origin'], '*');
      assert.match(r.headers['access-control-expose-headers'], /Content-Length/);
      assert.match(r.headers['access-control-expose-headers'], /Content-Range/);
      const pre = await request(s.url)
        .options(`/cdn/v/${pub.id}/${pub.rung}/seg_00000.ts`)
        .set('Origin', 'https://example.com')
        .set('Access-Control-Request-Method', 'GET')
        .set('Access-Control-Request-Headers', 'range');
      assert.equal(pre.status, 204);
      assert.equal(pre.headers['access-control-allow-origin'], '*');
      assert.match(pre.headers['access-control-allow-methods'], /GET/);
      assert.match(pre.headers['access-control-allow-headers'], /Range/i);
    });

    it('caches segments forever, playlists briefly while renditions are pending, token URLs privately', async () => {
      const cc = async (p: string) => (await cdn(p)).headers['cache-control'];
      assert.equal(await cc(`${pub.id}/${pub.rung}/seg_00000.ts`), 'public, max-age=31536000, immutable');
      assert.equal(await cc(`${pub.id}/master.m3u8`), 'public, max-age=300');
      assert.equal(await cc(`${pub.id}/thumbnail.jpg`), 'public, max-age=3600');
      await s.db('renditions').insert({ video_id: pub.uuid, name: '9999p', ordinal: 99, width: 1, height: 1, bitrate: 1, status: 'processing' });
      try {
        assert.equal(await cc(`${pub.id}/master.m3u8`), 'public, max-age=5');
      } finally {
        await s.db('renditions').where({ video_id: pub.uuid, name: '9999p' }).delete();
      }
      const { token } = (await s.get(`/v1/playback/${priv.id}?ttl=120`)).body;
      // Private, and never longer than the token has left (120 s minus however long this machine took to get here).
      const age = (v: string, re: RegExp) => Number(re.exec(v)?.[1] ?? NaN);
      const segAge = age(await cc(`${token}/${priv.rung}/seg_00000.ts`), /^private, max-age=(\d+), immutable$/);
      const masterAge = age(await cc(`${token}/master.m3u8`), /^private, max-age=(\d+)$/);
      for (const a of [segAge, masterAge]) assert.ok(a > 60 && a <= 120, `max-age ${a} within the token's 120 s`);
      assert.equal(await cc(`${priv.id}/master.m3u8`), 'no-store', 'a refusal is not cached');
    });
  });

  describe('bandwidth (SPEC §10)', () => {
    it('counts bytes served per workspace and month', async () => {
      const month = monthOf();
      const before = Number((await s.db('bandwidth_usage').where({ workspace_id: s.ws.id, month }).first())?.bytes ?? 0);
      const r = await cdn(`${pub.id}/${pub.rung}/seg_00000.ts`);
      const deadline = Date.now() + 10_000;
      let after = before;
      while (Date.now() < deadline && after < before + r.body.length) {
        await new Promise((res) => setTimeout(res, 200));
        after = Number((await s.db('bandwidth_usage').where({ workspace_id: s.ws.id, month }).first())?.bytes ?? 0);
      }
      assert.ok(after >= before + r.body.length, `usage went from ${before} to ${after}; served ${r.body.length}`);
    });

    it('403 bandwidth_quota_exceeded for a Free workspace past 20 GB; paid plans are not capped', async () => {
      const month = monthOf();
      const limit = 20 * 1024 ** 3;
      await s.db.raw(
        `insert into bandwidth_usage (workspace_id, month, bytes) values (?, ?, ?)
         on conflict (workspace_id, month) do update set bytes = excluded.bytes`,
        [s.ws.id, month, limit],
      );
      try {
        const r = await cdn(`${pub.id}/${pub.rung}/seg_00000.ts`);
        assert.equal(r.status, 403);
        assert.equal(JSON.parse(r.body.toString()).error.code, 'bandwidth_quota_exceeded');
        await s.db('workspaces').where({ id: s.ws.id }).update({ plan: 'starter' });
        assert.equal((await cdn(`${pub.id}/${pub.rung}/seg_00000.ts`)).status, 200);
      } finally {
        await s.db('workspaces').where({ id: s.ws.id }).update({ plan: 'free' });
        await s.db('bandwidth_usage').where({ workspace_id: s.ws.id }).delete();
      }
    });
  });
});
