import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { escapeHtml } from '../../api/player/page';
import { monthOf } from '../../lib/playback/bandwidth';
import { makeClip } from '../support/media';
import { isStatus, uploadFormA, waitForVideo } from '../support/flow';
import { startStack, type Stack } from '../support/stack';
import { readyVideo, waitUntil } from './helpers';

const XSS = `"><script>alert(1)</script><img src=x onerror=alert(2)>`;

describe('Player: the embed page', function () {
  let s: Stack;
  let pub: Awaited<ReturnType<typeof readyVideo>>;
  let priv: Awaited<ReturnType<typeof readyVideo>>;
  const embed = (p: string) => request(s.url).get(`/player/embed/${p}`);

  before(async function () {
    this.timeout(240_000);
    // These tests change rows behind the API's back and look at once; the access cache (pushed
    // invalidation, test/hot/cdn.test.ts) is off here so that each answer reads the row.
    s = await startStack({ env: { CDN_ACCESS_CACHE_MS: '0' } });
    const clip = await makeClip({ width: 320, height: 180, seconds: 4 });
    [pub, priv] = await Promise.all([readyVideo(s, clip, 'public'), readyVideo(s, clip, 'private')]);
  });

  it('escapes HTML', () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('a ready video: a video element on the CDN, hls.js from the project, a strict CSP, frameable', async () => {
    const r = await embed(pub.id);
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^text\/html/);
    assert.match(r.text, /data-state="ready"/);
    assert.ok(r.text.includes(`data-src="${s.config.cdnUrl}/v/${pub.id}/master.m3u8"`));
    assert.ok(r.text.includes(`poster="${s.config.cdnUrl}/v/${pub.id}/thumbnail.jpg"`));
    assert.doesNotMatch(r.text, /https?:\/\/(?!127\.0\.0\.1)/, 'no third-party URLs');
    assert.doesNotMatch(r.text, /<script>|<script [^>]*>[^<]/, 'no inline script');
    const csp = r.headers['content-security-policy'];
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /frame-ancestors/);
    assert.equal(r.headers['x-frame-options'], undefined);

    const scripts = [...r.text.matchAll(/<script src="([^"]+)"><\/script>/g)].map((m) => m[1].replace(/&amp;/g, '&'));
    assert.equal(scripts.length, 2);
    const hls = await request(s.url).get(scripts[0]);
    assert.equal(hls.status, 200);
    assert.match(hls.headers['content-type'], /javascript/);
    assert.equal(hls.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.ok(hls.text.length > 100_000, 'the hls.js bundle');
    const js = await request(s.url).get(scripts[1]);
    assert.equal(js.status, 200);
    assert.match(js.text, /Hls\.isSupported/);
  });

  it('escapes what it interpolates', async () => {
    await s.db('videos').where({ id: pub.uuid }).update({ title: XSS });
    try {
      const r = await embed(pub.id);
      assert.equal(r.status, 200);
      assert.ok(!r.text.includes(XSS));
      assert.ok(r.text.includes(`<title>${escapeHtml(XSS)}</title>`));
      const t = await embed(`${priv.id}?token=${encodeURIComponent(XSS)}`);
      assert.equal(t.status, 403);
      assert.ok(!t.text.includes('<script>alert'));
    } finally {
      await s.db('videos').where({ id: pub.uuid }).update({ title: 'public clip' });
    }
  });

  it('private: 403 page without a valid token, or with another video’s; plays with its own', async () => {
    const none = await embed(priv.id);
    assert.equal(none.status, 403);
    assert.match(none.text, /data-state="forbidden"/);
    assert.match(none.text, /private/i);
    const otherToken = (await s.get(`/v1/playback/${pub.id}`)).body.token;
    const other = await embed(`${priv.id}?token=${otherToken}`);
    assert.equal(other.status, 403, 'a token for another video');
    const { body } = await s.get(`/v1/playback/${priv.id}`);
    const ok = await request(body.embed_url).get('');
    assert.equal(ok.status, 200);
    assert.ok(ok.text.includes(`data-src="${body.hls_url}"`));
    assert.equal(ok.headers['cache-control'], 'private, no-store');
  });

  it('404 page for unknown, malformed and deleted videos', async () => {
    for (const id of [`vid_${'0'.repeat(32)}`, 'nope', '..%2f..%2fetc']) {
      const r = await embed(id);
      assert.equal(r.status, 404, id);
      assert.match(r.text, /data-state="not_found"/);
      assert.match(r.text, /not found/i);
    }
    await s.db('videos').where({ id: pub.uuid }).update({ deleted_at: new Date() });
    try {
      assert.equal((await embed(pub.id)).status, 404);
    } finally {
      await s.db('videos').where({ id: pub.uuid }).update({ deleted_at: null });
    }
  });

  it('says so when a Free workspace has used its monthly bandwidth', async () => {
    await s.db('bandwidth_usage').insert({ workspace_id: s.ws.id, month: monthOf(), bytes: 20 * 1024 ** 3 });
    try {
      const r = await embed(pub.id);
      assert.equal(r.status, 403);
      assert.match(r.text, /data-state="unavailable"/);
    } finally {
      await s.db('bandwidth_usage').where({ workspace_id: s.ws.id }).delete();
    }
    assert.equal((await embed(pub.id)).status, 200);
  });

  it('says when a video is still processing, and when it failed', async () => {
    const init = await s.post('/v1/upload/init', { filename: 'soon.mp4', size: 1000, content_type: 'video/mp4' });
    const waiting = await embed(init.body.video_id);
    assert.equal(waiting.status, 200);
    assert.match(waiting.text, /data-state="processing"/);
    assert.match(waiting.text, /still processing/);
    assert.match(waiting.text, /http-equiv="refresh"/);

    const garbage = path.join(os.tmpdir(), `not-a-video-${process.pid}.mp4`);
    fs.writeFileSync(garbage, Buffer.alloc(4096, 'this is not a video '));
    const up = await uploadFormA(s, garbage);
    await waitForVideo(s, up.id, isStatus('failed'));
    await waitUntil(async () => (await embed(up.id)).text.includes('data-state="failed"'), 'the failed page');
    const failed = await embed(up.id);
    assert.equal(failed.status, 200);
    assert.match(failed.text, /data-state="failed"/);
    assert.match(failed.text, /could not be processed/);
  });
});

