import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createDecipheriv } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { type LiveStack, pushRtmp, startLiveStack, waitFor, waitLive } from '../live/helpers';
import { nowSeconds, secretOf, signToken } from '../playback/helpers';

const run = promisify(execFile);

/** Does ffprobe decode a video frame of this MPEG-TS segment? */
async function decodes(bytes: Buffer): Promise<boolean> {
  const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vh-liveprot-')), 'seg.ts');
  fs.writeFileSync(f, bytes);
  try {
    const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-count_frames', '-show_entries', 'stream=codec_name,nb_read_frames', '-of', 'json', f]);
    const st = JSON.parse(stdout).streams?.[0];
    return st?.codec_name === 'h264' && Number(st.nb_read_frames) > 0;
  } catch {
    return false;
  } finally {
    fs.rmSync(path.dirname(f), { recursive: true, force: true });
  }
}

const ALLOWED = 'https://www.allowed.example/page';
const OTHER = 'https://evil.example/page';

/** SPEC §20 on live streams (issue 25): the stream's restriction on /cdn/live/… and the live embed page. */
describe('Playback protection of live streams (SPEC §20)', function () {
  this.timeout(120_000);
  let s: LiveStack;
  before(async function () {
    this.timeout(300_000);
    // Behind a trusted proxy (the test client), so a token's `ip` claim is judged on X-Forwarded-For.
    s = await startLiveStack({ env: { TRUSTED_PROXIES: '127.0.0.1/32' } });
  });
  after(() => s?.close());

  const get = (url: string, headers: Record<string, string> = {}) => {
    const t = request(s.url).get(new URL(url).pathname).buffer(true).parse((res, cb) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => cb(null, Buffer.concat(chunks)));
    });
    for (const [k, v] of Object.entries(headers)) t.set(k, v);
    return t;
  };
  const code = (res: { body: Buffer }) => JSON.parse(res.body.toString()).error.code;

  it('validates playback_restriction_id on create and patch', async () => {
    await s.post('/v1/live-streams', { playback_restriction_id: 'pr_nope' }).expect(400);
    await s.post('/v1/live-streams', { playback_restriction_id: '' }).expect(400);
    const ls = (await s.post('/v1/live-streams', {}).expect(201)).body;
    assert.equal(ls.playback_restriction_id, null);
    await s.patch(`/v1/live-streams/${ls.id}`, { playback_restriction_id: `pr_${'0'.repeat(32)}` }).expect(400);
    const pr = (await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['example.com'] } }).expect(201)).body;
    assert.equal((await s.patch(`/v1/live-streams/${ls.id}`, { playback_restriction_id: pr.id }).expect(200)).body.playback_restriction_id, pr.id);
    assert.equal((await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.playback_restriction_id, pr.id);
    assert.equal((await s.patch(`/v1/live-streams/${ls.id}`, { playback_restriction_id: null }).expect(200)).body.playback_restriction_id, null);
  });

  it('refuses other and missing Referers on the live playlists, segments and embed page; changes apply at once', async () => {
    const pr = (await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['*.allowed.example'], allow_no_referrer: false } }).expect(201)).body;
    const created = (await s.post('/v1/live-streams', { title: 'guarded', reconnect_window: 2, playback_restriction_id: pr.id }).expect(201)).body;
    assert.equal(created.playback_restriction_id, pr.id);
    // Off air, the embed page already carries the allow-list.
    const offAir = await request(s.url).get(new URL(created.embed_url).pathname).set('Referer', ALLOWED).expect(200);
    assert.match(offAir.headers['content-security-policy'], /frame-ancestors 'self' .*\*\.allowed\.example:\*/);
    const p = pushRtmp(`${s.rtmpBase}/${created.stream_key}`, { seconds: 40 });
    try {
      const active = await waitLive(s, created.id);
      // The recording inherits the stream's restriction.
      assert.equal((await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body.playback_restriction_id, pr.id);
      const master = created.hls_url as string;
      // The first variant the live ladder lists (a 320x240 source may have only `source`).
      const rung = await waitFor('the live master playlist', async () => {
        const r = await get(master, { Referer: ALLOWED });
        return r.status === 200 && /^([a-z0-9]+)\/index\.m3u8$/m.exec(r.body.toString())?.[1];
      });
      const mediaUrl = master.replace('master.m3u8', `${rung}/index.m3u8`);
      const media = await waitFor('a live segment', async () => {
        const r = await get(mediaUrl, { Referer: ALLOWED });
        return r.status === 200 && /^seg_\d{6}\.ts$/m.test(r.body.toString()) && r.body.toString();
      });
      const segUrl = master.replace('master.m3u8', `${rung}/${/^(seg_\d{6}\.ts)$/m.exec(media)![1]}`);

      for (const url of [master, mediaUrl, segUrl]) {
        const ok = await get(url, { Referer: ALLOWED }).expect(200);
        if (url === segUrl) {
          assert.ok(ok.body.length > 1000);
          assert.match(ok.headers['cache-control'], /^private/, 'a restricted segment is not for shared caches');
        }
        const other = await get(url, { Referer: OTHER });
        assert.equal(other.status, 403, `${url} from another site`);
        assert.equal(code(other), 'playback_restricted');
        const none = await get(url);
        assert.equal(none.status, 403, `${url} without a Referer`);
        assert.equal(code(none), 'playback_restricted');
        // No Referer: the Origin decides.
        await get(url, { Origin: 'https://app.allowed.example' }).expect(200);
        assert.equal((await get(url, { Origin: 'https://evil.example' })).status, 403);
        // The embed player's own fetches always may.
        await get(url, { Referer: created.embed_url }).expect(200);
      }

      // The live embed page: Referer check plus frame-ancestors from the allow-list.
      const embedPath = new URL(created.embed_url).pathname;
      const page = await request(s.url).get(embedPath).set('Referer', ALLOWED).expect(200);
      assert.match(page.text, /data-live="1"/);
      assert.match(page.headers['content-security-policy'], /frame-ancestors 'self' http:\/\/127\.0\.0\.1:\d+ \*\.allowed\.example:\*/);
      assert.match(page.headers['cache-control'], /no-store/);
      const refused = await request(s.url).get(embedPath).set('Referer', OTHER).expect(403);
      assert.match(refused.headers['content-security-policy'], /frame-ancestors/);
      assert.doesNotMatch(refused.text, /master\.m3u8/);
      await request(s.url).get(embedPath).expect(403);

      // Restriction changes take effect on the next request (the live routes read the rows per request).
      await s.patch(`/v1/playback-restrictions/${pr.id}`, { referrer: { allow_no_referrer: true } }).expect(200);
      await get(master).expect(200);
      await get(segUrl).expect(200);
      assert.equal((await get(master, { Referer: OTHER })).status, 403);
      // The stream names none: unrestricted, no frame-ancestors…
      await s.patch(`/v1/live-streams/${created.id}`, { playback_restriction_id: null }).expect(200);
      await get(master, { Referer: OTHER }).expect(200);
      assert.doesNotMatch((await request(s.url).get(embedPath).set('Referer', OTHER).expect(200)).headers['content-security-policy'], /frame-ancestors/);
      // …until the workspace default names one, which then applies to the stream.
      const strict = (await s.post('/v1/playback-restrictions', { referrer: { allowed_domains: ['allowed.example'], allow_no_referrer: false } }).expect(201)).body;
      await s.patch('/v1/playback-defaults', { default_playback_restriction_id: strict.id }).expect(200);
      try {
        assert.equal((await get(mediaUrl, { Referer: OTHER })).status, 403);
        assert.equal((await get(segUrl)).status, 403);
        await get(segUrl, { Referer: 'https://allowed.example/x' }).expect(200);
        await request(s.url).get(embedPath).set('Referer', OTHER).expect(403);
      } finally {
        await s.patch('/v1/playback-defaults', { default_playback_restriction_id: null }).expect(200);
      }
      await get(master, { Referer: OTHER }).expect(200);
    } finally {
      // End the broadcast and let the live worker let go of it before the next test's.
      await s.post(`/v1/live-streams/${created.id}/complete`);
      p.stop();
      await p.done;
      await waitFor('idle', async () => (await s.get(`/v1/live-streams/${created.id}`)).body.status === 'idle', 30_000).catch(() => undefined);
    }
  });

  it('a live token (GET /playback/{ls_id}) holds its ip and max_resolution claims on every live file', async () => {
    const created = (await s.post('/v1/live-streams', { title: 'claims', reconnect_window: 2 }).expect(201)).body;
    assert.equal((await s.get(`/v1/playback/${created.id}`).expect(409)).body.error.code, 'not_live');
    await s.get(`/v1/playback/ls_${'0'.repeat(32)}`).expect(404);
    // A 480x270 feed (the smallest 16:9 one with a rung below it): the `source` rung and an encoded 240p.
    const p = pushRtmp(`${s.rtmpBase}/${created.stream_key}`, { seconds: 50, size: '480x270' });
    try {
      await waitLive(s, created.id);
      const mint = async (query: string) => (await s.get(`/v1/playback/${created.id}${query}`).expect(200)).body;
      await s.get(`/v1/playback/${created.id}?ip=nope`).expect(400);
      await s.get(`/v1/playback/${created.id}?playback_restriction_id=pr_${'0'.repeat(32)}`).expect(400);
      const full = await mint('');
      assert.match(full.hls_url, new RegExp(`/live/${full.token}/master\\.m3u8$`));
      const rungsOf = (text: string) => [...text.matchAll(/^([a-z0-9]+)\/index\.m3u8$/gm)].map((m) => m[1]).sort();
      await waitFor('both rungs live', async () => {
        const r = await get(full.hls_url);
        return r.status === 200 && rungsOf(r.body.toString()).join() === '240p,source';
      }, 60_000);
      const segOf = async (base: string, rung: string) =>
        waitFor(`a ${rung} segment`, async () => {
          const r = await get(base.replace('master.m3u8', `${rung}/index.m3u8`));
          return r.status === 200 && /^(seg_\d{6}\.ts)$/m.exec(r.body.toString())?.[1];
        });
      const srcSeg = await segOf(full.hls_url, 'source');

      // max_resolution=240p: the master lists 240p only; the source rung's playlist and segments are refused.
      const capped = await mint('?max_resolution=240p');
      const master = capped.hls_url as string;
      assert.deepEqual(rungsOf((await get(master).expect(200)).body.toString()), ['240p']);
      const low = await segOf(master, '240p');
      await get(master.replace('master.m3u8', `240p/${low}`)).expect(200);
      for (const f of ['source/index.m3u8', `source/${srcSeg}`]) {
        const r = await get(master.replace('master.m3u8', f));
        assert.equal(r.status, 403, f);
        assert.equal(code(r), 'playback_restricted');
      }
      // A 1080p cap lists both; the same files by the uncapped token still play.
      assert.deepEqual(rungsOf((await get((await mint('?max_resolution=1080p')).hls_url).expect(200)).body.toString()), ['240p', 'source']);
      await get(full.hls_url.replace('master.m3u8', `source/${srcSeg}`)).expect(200);

      // ip: judged on the forwarded address (the test client is a trusted proxy).
      const bound = await mint('?ip=203.0.113.0/24');
      const files = [bound.hls_url, bound.hls_url.replace('master.m3u8', 'source/index.m3u8'), bound.hls_url.replace('master.m3u8', `source/${srcSeg}`)];
      for (const url of files) {
        await get(url, { 'X-Forwarded-For': '203.0.113.7' }).expect(200);
        for (const h of [{ 'X-Forwarded-For': '198.51.100.7' }, {}] as Record<string, string>[]) {
          const r = await get(url, h);
          assert.equal(r.status, 403, `${url} from ${JSON.stringify(h)}`);
          assert.equal(code(r), 'playback_restricted');
        }
      }
    } finally {
      await s.post(`/v1/live-streams/${created.id}/complete`);
      p.stop();
      await p.done;
      await waitFor('idle', async () => (await s.get(`/v1/live-streams/${created.id}`)).body.status === 'idle', 30_000).catch(() => undefined);
    }
  });

  it('encrypts an aes-128 broadcast with the recording\'s key, which only a token gets', async () => {
    const created = (await s.post('/v1/live-streams', { title: 'sealed', reconnect_window: 2, encryption: 'aes-128', new_video_settings: { visibility: 'public' } }).expect(201)).body;
    assert.equal(created.encryption, 'aes-128');
    assert.equal((await s.post('/v1/live-streams', {}).expect(201)).body.encryption, 'none', 'the workspace default is none');
    const p = pushRtmp(`${s.rtmpBase}/${created.stream_key}`, { seconds: 40 });
    try {
      const active = await waitLive(s, created.id);
      const recording = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body;
      assert.equal(recording.encryption, 'aes-128', 'the recording inherits the encryption');
      const rung = await waitFor('the live master playlist', async () => {
        const r = await get(created.hls_url);
        return r.status === 200 && /^([a-z0-9]+)\/index\.m3u8$/m.exec(r.body.toString())?.[1];
      });
      // By bare id the playlists list the key URL, which refuses a bare id.
      const bare = await waitFor('a live segment', async () => {
        const r = await get(created.hls_url.replace('master.m3u8', `${rung}/index.m3u8`));
        return r.status === 200 && /^seg_\d{6}\.ts$/m.test(r.body.toString()) && r.body.toString();
      });
      const bareKey = /#EXT-X-KEY:METHOD=AES-128,URI="([^"]+)"/.exec(bare)![1];
      assert.equal(bareKey, `${s.config.cdnUrl}/live/${created.id}/key`);
      assert.equal((await get(bareKey)).status, 403);

      // The embed page mints a token of the recording for its player.
      const page = await request(s.url).get(new URL(created.embed_url).pathname).expect(200);
      assert.match(page.headers['cache-control'], /no-store/);
      const src = /(https?:\/\/[^"]*\/live\/([^/"]+)\/master\.m3u8)/.exec(page.text);
      assert.ok(src && src[2] !== created.id, 'the embed page plays by token');
      const t = src[2];
      const media = (await get(`${s.config.cdnUrl}/live/${t}/${rung}/index.m3u8`).expect(200)).body.toString();
      const keyLine = /#EXT-X-KEY:METHOD=AES-128,URI="([^"]+)",IV=0x([0-9a-f]{32})\n(?:#[^\n]*\n)*(seg_\d{6}\.ts)/.exec(media);
      assert.ok(keyLine, media);
      assert.equal(keyLine[1], `${s.config.cdnUrl}/live/${t}/key`);
      const key = (await get(keyLine[1]).expect(200)).body;
      assert.equal(key.length, 16);
      // A segment on its own is noise to ffprobe; with the key and its IV it is H.264 again.
      const enc = (await get(`${s.config.cdnUrl}/live/${t}/${rung}/${keyLine[3]}`).expect(200)).body;
      assert.equal(await decodes(enc), false);
      const d = createDecipheriv('aes-128-cbc', key, Buffer.from(keyLine[2], 'hex'));
      assert.equal(await decodes(Buffer.concat([d.update(enc), d.final()])), true);
      // The same segment by bare id is the same ciphertext (the key is what is withheld).
      assert.deepEqual((await get(`${s.config.cdnUrl}/live/${created.id}/${rung}/${keyLine[3]}`).expect(200)).body, enc);
      // An expired token, a forged one and another video's token get no key.
      const { active_video_id: uuid } = await s.db('live_streams').where({ id: created.id }).first('active_video_id');
      const expired = await signToken(secretOf(s, 'k1'), 'k1', { sub: uuid, exp: nowSeconds() - 10 });
      assert.notEqual((await get(`${s.config.cdnUrl}/live/${expired}/key`)).status, 200);
      assert.notEqual((await get(`${s.config.cdnUrl}/live/${t.slice(0, -2)}xx/key`)).status, 200);
      const other = await signToken(secretOf(s, 'k1'), 'k1', { sub: '00000000-0000-7000-8000-000000000000', exp: nowSeconds() + 60 });
      assert.notEqual((await get(`${s.config.cdnUrl}/live/${other}/key`)).status, 200);

      // The finished recording serves the same ciphertext under the same key on /v/.
      await s.post(`/v1/live-streams/${created.id}/complete`).expect(200);
      await waitFor('recording ready', async () => (await s.get(`/v1/videos/${recording.id}`).expect(200)).body.status === 'ready', 30_000);
      const vt = (await s.get(`/v1/playback/${recording.id}`).expect(200)).body.token as string;
      assert.deepEqual((await get(`${s.config.cdnUrl}/v/${vt}/key`).expect(200)).body, key);
      assert.deepEqual((await get(`${s.config.cdnUrl}/v/${vt}/${rung}/${keyLine[3]}`).expect(200)).body, enc);
    } finally {
      p.stop();
      await p.done;
    }
  });
});
