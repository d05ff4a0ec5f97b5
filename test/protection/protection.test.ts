import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createDecipheriv, type Decipher } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { probeBytes } from '../outputs/helpers';
import { waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { binary, nowSeconds, playlistUris, readyVideo, secretOf, signToken, waitUntil } from '../playback/helpers';

const run = promisify(execFile);
type Video = Awaited<ReturnType<typeof readyVideo>>;

const ALLOWED = 'https://www.allowed.example/page';
const OTHER = 'https://evil.example/page';

/** Does ffprobe decode a frame of this file? */
async function decodes(bytes: Buffer): Promise<boolean> {
  const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vh-prot-')), 'seg.ts');
  fs.writeFileSync(f, bytes);
  try {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-count_frames', '-show_entries', 'stream=codec_name,nb_read_frames', '-of', 'json', f]);
    const s = JSON.parse(stdout).streams?.[0];
    return s?.codec_name === 'h264' && Number(s.nb_read_frames) > 0;
  } catch {
    return false;
  }
}

describe('Playback protection (SPEC §20)', function () {
  this.timeout(60_000);
  let s: Stack;
  let s2: Stack;
  let restricted: Video;
  let encrypted: Video;
  let plain: Video;
  let prId: string;
  const cdn = (stack: Stack, p: string, headers: Record<string, string> = {}) => {
    const t = request(stack.url).get(`/cdn/v/${p}`).buffer(true).parse(binary);
    for (const [k, v] of Object.entries(headers)) t.set(k, v);
    return t;
  };
  const token = async (id: string, query = '') => (await s.get(`/v1/playback/${id}${query}`).expect(200)).body.token as string;

  before(async function () {
    this.timeout(300_000);
    // A long cache TTL: a change seen within a second is the pushed invalidation, not expiry.
    const env = { CDN_ACCESS_CACHE_MS: '60000' };
    s = await startStack({ env });
    // A second API process on the same database and storage, as behind a load balancer.
    s2 = await startStack({ env: { ...env, STORAGE_LOCAL_DIR: s.config.storage.localDir }, workers: [] });
    const pr = await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['*.allowed.example', 'allowed.example'], allow_no_referrer: false } }).expect(201);
    prId = pr.body.id;
    // The restricted and plain videos need a ladder of two rungs (360p and 240p: max_resolution,
    // the MP4 cut from 360p). The encrypted one needs only one rung of H.264 segments and its
    // images, so it is the small clip most files already generate: a fifth of the encoding.
    const [clip, small] = await Promise.all([makeClip({ width: 640, height: 360, seconds: 3 }), makeClip({ width: 320, height: 180, seconds: 2 })]);
    const up = (file: string, extra: Record<string, unknown>) => readyVideo(s, file, 'public').then(async (v) => {
      await s.patch(`/v1/videos/${v.id}`, extra).expect(200);
      return v;
    });
    [restricted, encrypted, plain] = await Promise.all([
      up(clip, { playback_restriction_id: prId, mp4_support: 'capped_1080p' }),
      up(small, { encryption: 'aes-128' }),
      readyVideo(s, clip, 'public'),
    ]);
  });

  after(async () => {
    await s2?.close();
    await s?.close();
  });

  describe('the resource', () => {
    it('creates, reads, lists, patches and deletes, with domains normalised', async () => {
      const c = await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['Bücher.DE', '*.Example.com', 'example.com:8443', '*.example.com'] } }).expect(201);
      assert.match(c.body.id, /^pr_[0-9a-f]{32}$/);
      assert.deepEqual(c.body.referrer, { allowed_domains: ['xn--bcher-kva.de', '*.example.com', 'example.com:8443'], allow_no_referrer: true });
      assert.deepEqual((await s.get(`/v1/playback-restrictions/${c.body.id}`).expect(200)).body, c.body);
      const list = await s.get('/v1/playback-restrictions').expect(200);
      assert.ok(list.body.data.some((r: { id: string }) => r.id === c.body.id));
      const p = await s.patch(`/v1/playback-restrictions/${c.body.id}`, { referrer: { allow_no_referrer: false } }).expect(200);
      assert.equal(p.body.referrer.allow_no_referrer, false);
      assert.deepEqual(p.body.referrer.allowed_domains, c.body.referrer.allowed_domains);
      // Another workspace's key sees nothing.
      const other = await s.newWorkspace();
      await s.get(`/v1/playback-restrictions/${c.body.id}`, other.fullKey).expect(404);
      await s.patch(`/v1/videos/${plain.id}`, { playback_restriction_id: 'pr_00000000000000000000000000000000' }).expect(400);
      await s.del(`/v1/playback-restrictions/${c.body.id}`).expect(204);
      await s.get(`/v1/playback-restrictions/${c.body.id}`).expect(404);
    });

    it('refuses schemes, paths, misplaced wildcards and wildcards over a public suffix', async () => {
      for (const bad of ['https://example.com', 'example.com/path', 'a.*.example.com', '*.com', '*.co.uk', '*.github.io', 'exa mple.com', '']) {
        const r = await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: [bad] } });
        assert.equal(r.status, 400, bad);
        assert.equal(r.body.error.code, 'invalid_parameters', bad);
      }
    });

    it('shows the restriction and encryption in the video read shape', async () => {
      const r = await s.get(`/v1/videos/${restricted.id}`).expect(200);
      assert.equal(r.body.playback_restriction_id, prId);
      assert.equal(r.body.encryption, 'none');
      assert.equal((await s.get(`/v1/videos/${encrypted.id}`).expect(200)).body.encryption, 'aes-128');
    });
  });

  describe('Referer, then Origin, on every file kind', () => {
    it('allows the allow-list, refuses another site and (allow_no_referrer false) a missing Referer', async () => {
      const seg = playlistUris((await cdn(s, `${restricted.id}/${restricted.rung}/index.m3u8`, { Referer: ALLOWED }).expect(200)).body.toString())[0];
      const dl = await token(restricted.id, '?download=true');
      const files = [
        `${restricted.id}/master.m3u8`,
        `${restricted.id}/${restricted.rung}/index.m3u8`,
        `${restricted.id}/${restricted.rung}/${seg}`,
        `${restricted.id}/thumbnail.jpg`,
        `${restricted.id}/thumbnail.png?width=64`,
        `${dl}/download/capped_1080p.mp4`,
        `${restricted.id}/storyboard.vtt`,
        `${restricted.id}/storyboard.jpg`,
        `${restricted.id}/captions/en.vtt`,
        `${restricted.id}/subs/en/index.m3u8`,
      ];
      await request(s.url)
        .put(`/v1/videos/${restricted.id}/captions/en`)
        .set('Authorization', `Bearer ${s.ws.fullKey}`)
        .set('Content-Type', 'text/vtt')
        .send('WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nHello\n')
        .expect(201);
      await waitUntil(async () => {
        const v = (await s.get(`/v1/videos/${restricted.id}`)).body;
        return v.static_renditions?.[0]?.status === 'ready' && !!v.storyboard_url;
      }, 'the MP4 and the storyboard', 60_000);
      for (const f of files) {
        // Twice: the second is answered from the warm caches (the fast path for segments).
        for (let i = 0; i < 2; i++) await cdn(s, f, { Referer: ALLOWED }).expect(200);
        await cdn(s, f, { Referer: 'https://allowed.example:8443/x' }).expect(200);
        const other = await cdn(s, f, { Referer: OTHER });
        assert.equal(other.status, 403, f);
        assert.equal(JSON.parse(other.body.toString()).error.code, 'playback_restricted', f);
        assert.equal((await cdn(s, f)).status, 403, `${f} without a Referer`);
        // No Referer: the Origin decides.
        await cdn(s, f, { Origin: 'https://app.allowed.example' }).expect(200);
        assert.equal((await cdn(s, f, { Origin: 'https://evil.example' })).status, 403, f);
        // The service's own pages (the embed player) always may.
        await cdn(s, f, { Referer: `${s.config.playerUrl}/embed/${restricted.id}` }).expect(200);
      }
      // The embed page: the embedding site's Referer, and frame-ancestors from the list.
      const page = await request(s.url).get(`/player/embed/${restricted.id}`).set('Referer', ALLOWED).expect(200);
      assert.match(page.headers['content-security-policy'], /frame-ancestors 'self' http:\/\/127\.0\.0\.1:\d+ \*\.allowed\.example:\* allowed\.example:\*/);
      const refused = await request(s.url).get(`/player/embed/${restricted.id}`).set('Referer', OTHER).expect(403);
      assert.match(refused.text, /cannot be played here/);
      // Downloads of a protected video need the download claim.
      assert.equal((await cdn(s, `${restricted.id}/download/capped_1080p.mp4`, { Referer: ALLOWED })).status, 403);
      assert.equal((await cdn(s, `${await token(restricted.id)}/download/capped_1080p.mp4`, { Referer: ALLOWED })).status, 403);
      // An unrestricted video has no frame-ancestors and plays from anywhere.
      assert.doesNotMatch((await request(s.url).get(`/player/embed/${plain.id}`).expect(200)).headers['content-security-policy'], /frame-ancestors/);
      await cdn(s, `${plain.id}/master.m3u8`, { Referer: OTHER }).expect(200);
    });

    it('a token may carry another restriction, which replaces the video’s', async () => {
      const open = await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['evil.example'], allow_no_referrer: false } }).expect(201);
      const t = await token(restricted.id, `?playback_restriction_id=${open.body.id}`);
      await cdn(s, `${t}/master.m3u8`, { Referer: OTHER }).expect(200);
      assert.equal((await cdn(s, `${t}/master.m3u8`, { Referer: ALLOWED })).status, 403);
    });
  });

  describe('token claims', () => {
    it('ip: only the address or range named', async () => {
      const here = await token(plain.id, '?ip=127.0.0.1');
      await cdn(s, `${here}/master.m3u8`).expect(200);
      const range = await token(plain.id, '?ip=127.0.0.0/8');
      await cdn(s, `${range}/master.m3u8`).expect(200);
      const elsewhere = await token(plain.id, '?ip=203.0.113.7');
      const r = await cdn(s, `${elsewhere}/master.m3u8`);
      assert.equal(r.status, 403);
      assert.equal(JSON.parse(r.body.toString()).error.code, 'playback_restricted');
      assert.equal((await s.get(`/v1/playback/${plain.id}?ip=not-an-ip`)).status, 400);
    });

    it('max_resolution: the master lists only lower rungs; higher rungs are refused', async () => {
      const full = playlistUris((await cdn(s, `${plain.id}/master.m3u8`).expect(200)).body.toString());
      assert.ok(full.length >= 2, `a ladder of several rungs: ${full}`);
      const t = await token(plain.id, '?max_resolution=240p');
      const capped = playlistUris((await cdn(s, `${t}/master.m3u8`).expect(200)).body.toString());
      assert.deepEqual(capped, ['240p/index.m3u8']);
      const high = full.find((u) => !u.startsWith('240p'))!.split('/')[0];
      const seg = playlistUris((await cdn(s, `${plain.id}/${high}/index.m3u8`).expect(200)).body.toString())[0];
      assert.equal((await cdn(s, `${t}/${high}/index.m3u8`)).status, 403);
      for (let i = 0; i < 2; i++) assert.equal((await cdn(s, `${t}/${high}/${seg}`)).status, 403);
      await cdn(s, `${t}/240p/index.m3u8`).expect(200);
    });
  });

  describe('AES-128', () => {
    it('encrypts segments with a key only a valid token gets', async () => {
      const t = await token(encrypted.id);
      const media = (await cdn(s, `${t}/${encrypted.rung}/index.m3u8`).expect(200)).body.toString();
      const keyLine = /#EXT-X-KEY:METHOD=AES-128,URI="([^"]+)",IV=0x([0-9a-f]{32})/.exec(media);
      assert.ok(keyLine, media);
      assert.equal(keyLine[1], `${s.config.cdnUrl}/v/${t}/key`);
      const seg = playlistUris(media)[0];
      const key = (await cdn(s, `${t}/key`).expect(200)).body;
      assert.equal(key.length, 16);
      // Fetched on its own, a segment is noise to ffprobe; with the key and IV it is H.264 again.
      for (let i = 0; i < 2; i++) {
        const enc = (await cdn(s, `${t}/${encrypted.rung}/${seg}`).expect(200)).body;
        assert.equal(await decodes(enc), false);
        const d: Decipher = createDecipheriv('aes-128-cbc', key, Buffer.from(keyLine[2], 'hex'));
        assert.equal(await decodes(Buffer.concat([d.update(enc), d.final()])), true);
      }
      // The key refuses a bare id, an expired token and another video's token.
      assert.equal((await cdn(s, `${encrypted.id}/key`)).status, 403);
      const expired = await signToken(secretOf(s, 'k1'), 'k1', { sub: encrypted.uuid, exp: nowSeconds() - 10 });
      assert.equal((await cdn(s, `${expired}/key`)).status, 403);
      assert.equal((await cdn(s, `${await token(plain.id)}/key`)).status, 404);
      // An unencrypted video's segments stay as they were.
      const pseg = playlistUris((await cdn(s, `${plain.id}/${plain.rung}/index.m3u8`).expect(200)).body.toString())[0];
      assert.equal(await decodes((await cdn(s, `${plain.id}/${plain.rung}/${pseg}`).expect(200)).body), true);
    });
  });

  describe('CMAF renditions and DASH of an encrypted video', () => {
    it('are not served: 409 encryption_unsupported, and no dash_url', async () => {
      const t = await token(encrypted.id);
      for (const f of ['manifest.mpd', `${encrypted.rung}-hevc/index.m3u8`, `${encrypted.rung}-av1/init.mp4`, `${encrypted.rung}-hevc/seg_00000.m4s`]) {
        for (const subject of [t, encrypted.id]) {
          const r = await cdn(s, `${subject}/${f}`);
          assert.equal(r.status, 409, f);
          assert.equal(JSON.parse(r.body.toString()).error.code, 'encryption_unsupported');
        }
      }
      // A clear video's are served (404 here: this one has no HEVC encode).
      assert.equal((await cdn(s, `${plain.id}/manifest.mpd`)).status, 404);
      // As if the extra codecs had been encoded: the read names DASH for the clear video only.
      await s.db('videos').whereIn('id', [plain.uuid, encrypted.uuid]).update({ codecs: JSON.stringify(['h264', 'hevc']), dash_ready: true });
      try {
        assert.match((await s.get(`/v1/videos/${plain.id}`).expect(200)).body.dash_url, /manifest\.mpd$/);
        assert.equal((await s.get(`/v1/videos/${encrypted.id}`).expect(200)).body.dash_url, null);
      } finally {
        await s.db('videos').whereIn('id', [plain.uuid, encrypted.uuid]).update({ codecs: JSON.stringify(['h264']), dash_ready: false });
      }
    });
  });

  // Issue 33 rows 2 and 10: the claims and the encryption hold on every file, not only on HLS.
  describe('downloads and images', () => {
    const json = (r: { body: Buffer }) => JSON.parse(r.body.toString()).error.code as string;
    const shortSide = async (bytes: Buffer, ext: string) => {
      const v = (await probeBytes(bytes, ext)).streams[0];
      return Math.min(Number(v.width), Number(v.height));
    };

    before(async function () {
      this.timeout(200_000);
      await s.patch(`/v1/videos/${plain.id}`, { mp4_support: 'capped_1080p' }).expect(200);
      await waitForVideo(s, plain.id, (v) => v.static_renditions[0]?.status === 'ready' && v.storyboard_url !== null, 150_000);
      await waitForVideo(s, encrypted.id, (v) => v.storyboard_url !== null, 150_000);
    });

    it('max_resolution: a download above the cap is refused; images are rendered within it', async () => {
      const t240 = await token(plain.id, '?max_resolution=240p');
      const t360 = await token(plain.id, '?max_resolution=360p');
      // The MP4 is cut from the 360p rung: a 240p token may not have it, a 360p one may.
      const capped = await cdn(s, `${t240}/download/capped_1080p.mp4`);
      assert.equal(capped.status, 403);
      assert.equal(json(capped), 'playback_restricted');
      await cdn(s, `${t360}/download/capped_1080p.mp4`).expect(200);
      // Images: the short side never above 240, whatever the query asks for.
      const big = (await cdn(s, `${t240}/thumbnail.png?width=1920`).expect(200)).body;
      const side = await shortSide(big, 'png');
      assert.ok(side <= 240 && side >= 230, `scaled down to the cap, not below it: ${side}`);
      const boxed = (await cdn(s, `${t240}/thumbnail.webp?width=1000&height=1000&fit_mode=crop`).expect(200)).body;
      assert.ok((await shortSide(boxed, 'webp')) <= 240);
      const gif = (await cdn(s, `${t240}/animated.gif?width=640`).expect(200)).body;
      assert.ok((await shortSide(gif, 'gif')) <= 240);
      const poster = (await cdn(s, `${t240}/thumbnail.jpg`).expect(200)).body;
      assert.ok((await shortSide(poster, 'jpg')) <= 240);
      // Storyboard tiles are 160 px wide: within every cap (the smallest is 240p), so served.
      const vtt = (await cdn(s, `${t240}/storyboard.vtt`).expect(200)).body.toString();
      const [, w, h] = /#xywh=\d+,\d+,(\d+),(\d+)/.exec(vtt)!;
      assert.ok(Math.min(Number(w), Number(h)) <= 240, vtt);
      await cdn(s, `${t240}/storyboard.jpg`).expect(200);
      // Without a cap the same query is as big as asked.
      assert.equal(await shortSide((await cdn(s, `${plain.id}/thumbnail.png?width=1920`).expect(200)).body, 'png'), 1080);
    });

    it('an encrypted video shows no frame by bare id: its images need a token, as its key does', async () => {
      const files = ['thumbnail.jpg', 'thumbnail.jpg?time=1', 'thumbnail.webp?width=320', 'animated.gif', 'storyboard.jpg'];
      for (const f of files) {
        const r = await cdn(s, `${encrypted.id}/${f}`);
        assert.equal(r.status, 403, f);
        assert.equal(json(r), 'forbidden', f);
      }
      const t = await token(encrypted.id);
      for (const f of files) await cdn(s, `${t}/${f}`).expect(200);
      // The cue list holds no picture; a clear video's images stay open by id.
      await cdn(s, `${encrypted.id}/storyboard.vtt`).expect(200);
      await cdn(s, `${plain.id}/thumbnail.jpg?time=1`).expect(200);
      // The embed pages give their player a token of their own: a video's, and a live stream's
      // off air, when its last recording (here: this video) is encrypted.
      const ls = (await s.post('/v1/live-streams', { title: 'recorded encrypted', visibility: 'public' }).expect(201)).body;
      await s.db('videos').where({ id: encrypted.uuid }).update({ live_stream_id: ls.id });
      try {
        for (const id of [encrypted.id, ls.id]) {
          const html = (await request(s.url).get(`/player/embed/${id}`).expect(200)).text;
          const poster = /poster="([^"]+)"/.exec(html)?.[1] ?? '';
          assert.ok(!poster.includes(`/v/${encrypted.id}/`), `${id}: a token in ${poster}`);
          await request(s.url).get(new URL(poster.replace(/&amp;/g, '&')).pathname).expect(200);
        }
      } finally {
        await s.db('videos').where({ id: encrypted.uuid }).update({ live_stream_id: null });
      }
    });
  });

  describe('changes reach every API process within a second', () => {
    it('a PATCH on one process is enforced by both', async () => {
      const pr = await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['allowed.example'], allow_no_referrer: true } }).expect(201);
      const id = pr.body.id;
      await s.patch(`/v1/videos/${plain.id}`, { playback_restriction_id: id }).expect(200);
      const f = `${plain.id}/master.m3u8`;
      await waitUntil(async () => (await cdn(s2, f, { Referer: OTHER })).status === 403, 'the second process to see the restriction', 1000);
      // Warm both caches with an allowed answer, then narrow the list on one process.
      for (const st of [s, s2]) await cdn(st, f, { Referer: 'https://allowed.example/' }).expect(200);
      const started = Date.now();
      await s.patch(`/v1/playback-restrictions/${id}`, { referrer: { allowed_domains: ['evil.example'] } }).expect(200);
      for (const st of [s, s2]) await waitUntil(async () => (await cdn(st, f, { Referer: 'https://allowed.example/' })).status === 403, 'the change', 1000);
      assert.ok(Date.now() - started < 1000);
      await s.patch(`/v1/videos/${plain.id}`, { playback_restriction_id: null }).expect(200);
      await waitUntil(async () => (await cdn(s2, f, { Referer: 'https://allowed.example/' })).status === 200, 'removal', 1000);
    });
  });
});
