import assert from 'node:assert/strict';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { parseRange } from '../../api/cdn/range';
import { cacheControl, parseCdnPath } from '../../api/cdn/files';
import { loadConfig } from '../../lib/config';
import { signPlaybackToken, verifyPlaybackToken } from '../../lib/playback/tokens';
import { signToken } from './helpers';

const UUID = '0190b8a2-1234-7abc-8def-0123456789ab';
const OTHER = '0190b8a2-1234-7abc-8def-ffffffffffff';
const s1 = 'first-secret-0123456789';
const s2 = 'second-secret-0123456789';
const playback = (keys: string, kid?: string) =>
  loadConfig({ NODE_ENV: 'test', PLAYBACK_SIGNING_KEYS: keys, ...(kid ? { PLAYBACK_SIGNING_KID: kid } : {}) }).playback;

describe('playback tokens', () => {
  it('signs HS256 with kid, sub, iat and exp, and verifies', async () => {
    const cfg = playback(`k1:${s1},k2:${s2}`, 'k2');
    const { token, expiresAt } = await signPlaybackToken(cfg, UUID, 120, 1_700_000_000_000);
    assert.deepEqual(decodeProtectedHeader(token), { alg: 'HS256', kid: 'k2' });
    const claims = decodeJwt(token);
    assert.equal(claims.sub, UUID);
    assert.equal(claims.iat, 1_700_000_000);
    assert.equal(claims.exp, 1_700_000_120);
    assert.equal(expiresAt.toISOString(), new Date(1_700_000_120_000).toISOString());
    const fresh = await signPlaybackToken(cfg, UUID, 120);
    assert.equal((await verifyPlaybackToken(cfg, fresh.token))?.videoUuid, UUID);
  });

  it('verifies with any configured key by kid, and with nothing else', async () => {
    const old = await signToken(new TextEncoder().encode(s1), 'k1', { sub: UUID, exp: Math.floor(Date.now() / 1000) + 60 });
    assert.equal((await verifyPlaybackToken(playback(`k1:${s1},k2:${s2}`, 'k2'), old))?.videoUuid, UUID);
    assert.equal(await verifyPlaybackToken(playback(`k2:${s2}`), old), null, 'rotated out');
    // The right kid with another secret is a forgery.
    assert.equal(await verifyPlaybackToken(playback(`k1:${s2}`), old), null);
  });

  it('refuses expired, tampered, unsigned and malformed tokens', async () => {
    const cfg = playback(`k1:${s1}`);
    const key = new TextEncoder().encode(s1);
    const past = await signToken(key, 'k1', { sub: UUID, exp: Math.floor(Date.now() / 1000) - 10 });
    assert.equal(await verifyPlaybackToken(cfg, past), null);
    const good = (await signPlaybackToken(cfg, UUID, 60)).token;
    const [h, , sig] = good.split('.');
    const swapped = `${h}.${Buffer.from(JSON.stringify({ sub: OTHER, exp: 9_999_999_999 })).toString('base64url')}.${sig}`;
    assert.equal(await verifyPlaybackToken(cfg, swapped), null);
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid: 'k1' })).toString('base64url')}.${good.split('.')[1]}.`;
    assert.equal(await verifyPlaybackToken(cfg, none), null);
    const noExp = await signToken(key, 'k1', { sub: UUID });
    assert.equal(await verifyPlaybackToken(cfg, noExp), null);
    const notUuid = await signToken(key, 'k1', { sub: '../etc', exp: 9_999_999_999 });
    assert.equal(await verifyPlaybackToken(cfg, notUuid), null);
    for (const junk of ['', 'a.b.c', 'vid_123', good + 'x']) assert.equal(await verifyPlaybackToken(cfg, junk), null, junk);
  });
});

describe('CDN paths, ranges and caching', () => {
  it('accepts only the files the pipeline publishes', () => {
    const id = 'vid_' + 'a'.repeat(32);
    for (const ok of ['master.m3u8', 'thumbnail.jpg', '240p/index.m3u8', '2160p/seg_00000.ts', '144p/seg_123456.ts']) {
      assert.ok(parseCdnPath(`${id}/${ok}`), ok);
    }
    assert.equal(parseCdnPath(`aaa.bbb.ccc/master.m3u8`)?.isId, false);
    for (const bad of [
      `${id}/../master.m3u8`,
      `${id}/hls/master.m3u8`,
      `${id}/240p/../../thumbnail.jpg`,
      `${id}/240p/index.m3u8.meta`,
      `${id}/240p/seg_1.ts`,
      `${id}/%2e%2e/master.m3u8`,
      `${id}/0240p/index.m3u8`,
      `${id}/master.m3u8/`,
      `../${id}/master.m3u8`,
      `vid_123/master.m3u8`,
      `a.b/master.m3u8`,
    ]) {
      assert.equal(parseCdnPath(bad), null, bad);
    }
  });

  it('parses single byte ranges; ignores malformed and multi-range headers', () => {
    assert.deepEqual(parseRange('bytes=0-99', 1000), { kind: 'range', start: 0, end: 99 });
    assert.deepEqual(parseRange('bytes=900-', 1000), { kind: 'range', start: 900, end: 999 });
    assert.deepEqual(parseRange('bytes=-100', 1000), { kind: 'range', start: 900, end: 999 });
    assert.deepEqual(parseRange('bytes=-5000', 1000), { kind: 'range', start: 0, end: 999 });
    assert.deepEqual(parseRange('bytes=990-5000', 1000), { kind: 'range', start: 990, end: 999 });
    assert.deepEqual(parseRange('bytes=1000-', 1000), { kind: 'unsatisfiable' });
    assert.deepEqual(parseRange('bytes=-0', 1000), { kind: 'unsatisfiable' });
    for (const h of [undefined, '', 'bytes=', 'bytes=5-1', 'items=0-1', 'bytes=0-1,5-6', 'bytes=abc']) {
      assert.deepEqual(parseRange(h, 1000), { kind: 'none' }, String(h));
    }
  });

  it('caches segments forever, playlists briefly while the ladder grows, token URLs privately', () => {
    assert.equal(cacheControl('segment', { growing: true, tokenExpiresAt: null }), 'public, max-age=31536000, immutable');
    assert.equal(cacheControl('playlist', { growing: true, tokenExpiresAt: null }), 'public, max-age=5');
    assert.equal(cacheControl('playlist', { growing: false, tokenExpiresAt: null }), 'public, max-age=300');
    assert.equal(cacheControl('thumbnail', { growing: false, tokenExpiresAt: null }), 'public, max-age=3600');
    const exp = new Date(1_000_000 + 90_000);
    assert.equal(cacheControl('segment', { growing: false, tokenExpiresAt: exp, now: 1_000_000 }), 'private, max-age=90, immutable');
    assert.equal(cacheControl('playlist', { growing: false, tokenExpiresAt: exp, now: 1_000_000 }), 'private, max-age=90');
  });
});
