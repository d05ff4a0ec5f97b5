import assert from 'node:assert/strict';
import request from 'supertest';
import { BandwidthMeter, monthOf } from '../../lib/playback/bandwidth';
import { createLogger } from '../../lib/logger';
import { withMasterLock, writeMaster } from '../../lib/outputs/publish';
import { keys } from '../../lib/storage';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { binary, readyVideo, waitUntil } from '../playback/helpers';

type Video = Awaited<ReturnType<typeof readyVideo>>;

describe('hot: CDN caching', function () {
  const TTL_MS = 2000;
  let s: Stack;
  let pub: Video;
  const cdn = (p: string, headers: Record<string, string> = {}) => request(s.url).get(`/cdn/v/${p}`).set(headers).buffer(true).parse(binary);

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ env: { CDN_ACCESS_CACHE_MS: String(TTL_MS) } });
    pub = await readyVideo(s, await makeClip({ width: 320, height: 180, seconds: 4 }), 'public');
  });

  it('ETag on segments and playlists; If-None-Match answers 304 without a body', async () => {
    for (const file of [`${pub.rung}/seg_00000.ts`, `${pub.rung}/index.m3u8`, 'master.m3u8', 'thumbnail.jpg']) {
      const full = await cdn(`${pub.id}/${file}`);
      assert.equal(full.status, 200, file);
      const etag = full.headers.etag;
      assert.match(etag, /^"[^"]+"$/, file);
      const again = await cdn(`${pub.id}/${file}`, { 'If-None-Match': etag });
      assert.equal(again.status, 304, file);
      assert.equal(again.body.length, 0, file);
      assert.equal(again.headers.etag, etag);
      assert.equal(again.headers['cache-control'], full.headers['cache-control']);
      // Weak form and lists match too; another tag does not.
      assert.equal((await cdn(`${pub.id}/${file}`, { 'If-None-Match': `"x", W/${etag}` })).status, 304, file);
      assert.equal((await cdn(`${pub.id}/${file}`, { 'If-None-Match': '"other"' })).status, 200, file);
      const head = await request(s.url).head(`/cdn/v/${pub.id}/${file}`);
      assert.equal(head.headers.etag, etag);
    }
    const seg = await cdn(`${pub.id}/${pub.rung}/seg_00000.ts`);
    assert.equal(seg.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(seg.headers['access-control-expose-headers'], /ETag/);
  });

  it(`a video made private stops playing by id (pushed invalidation; at most CDN_ACCESS_CACHE_MS=${TTL_MS} if a notification is lost)`, async () => {
    const file = `${pub.id}/master.m3u8`;
    assert.equal((await cdn(file)).status, 200); // cached now
    const t0 = Date.now();
    await s.patch(`/v1/videos/${pub.id}`, { visibility: 'private' }).expect(200);
    try {
      let status = 200;
      while (status === 200 && Date.now() - t0 < 20_000) {
        status = (await cdn(file)).status;
        if (status === 200) await new Promise((r) => setTimeout(r, 20));
      }
      const ms = Date.now() - t0;
      console.log(`      refused ${ms} ms after the PATCH (TTL ${TTL_MS} ms)`);
      assert.equal(status, 403, 'still playing 20 s after the change');
      // Segments too, not only the playlist.
      assert.equal((await cdn(`${pub.id}/${pub.rung}/seg_00000.ts`)).status, 403);
    } finally {
      await s.patch(`/v1/videos/${pub.id}`, { visibility: 'public' }).expect(200);
    }
  });

  it('small files are answered from memory (same bytes, ETag and ranges) until the video changes', async () => {
    const seg = `${pub.id}/${pub.rung}/seg_00000.ts`;
    const ws = (await s.db('videos').where({ id: pub.uuid }).first('workspace_id')).workspace_id;
    const key = `${keys.rendition(ws, pub.uuid, pub.rung)}seg_00000.ts`;
    const original = (await cdn(seg)).body as Buffer;
    try {
      const full = await cdn(seg); // from memory now
      assert.deepEqual(full.body, original);
      const part = await cdn(seg, { Range: 'bytes=10-99' });
      assert.equal(part.status, 206);
      assert.equal(part.headers['content-range'], `bytes 10-99/${original.length}`);
      assert.deepEqual(part.body, original.subarray(10, 100));
      assert.deepEqual((await cdn(seg, { Range: 'bytes=-16' })).body, original.subarray(original.length - 16));
      assert.equal((await cdn(seg, { Range: `bytes=${original.length}-` })).status, 416);
      // Storage changes behind the cache's back (no trigger fires): memory still answers...
      await s.storage.put(key, Buffer.from('not the segment'));
      assert.deepEqual((await cdn(seg)).body, original, 'the file was read from storage again: not cached');
      // ...until the video changes (the playback trigger), then storage is read again.
      const t0 = Date.now();
      await s.db('videos').where({ id: pub.uuid }).update({ title: 'retitled' });
      await waitUntil(async () => String((await cdn(seg)).body) === 'not the segment', 'the changed file served after the notification');
      assert.ok(Date.now() - t0 < 1000, `storage read again only after ${Date.now() - t0} ms: the TTL, not the notification`);
    } finally {
      await s.storage.put(key, original);
      await s.db('videos').where({ id: pub.uuid }).update({ title: 'public clip' });
    }
  });

  it('a master playlist rewritten elsewhere (a worker, another API) is served fresh: writeMaster announces it', async () => {
    const ws = (await s.db('videos').where({ id: pub.uuid }).first('workspace_id')).workspace_id;
    const original = String((await cdn(`${pub.id}/master.m3u8`)).body);
    assert.match(original, /#EXTM3U/);
    try {
      const t0 = Date.now();
      // Not through this process's routes, so only the notification can drop the cached file.
      await withMasterLock(s.db, pub.uuid, () => writeMaster(s.db, s.storage, { workspaceId: ws, videoId: pub.uuid, text: `${original}# rewritten\n` }));
      await waitUntil(async () => String((await cdn(`${pub.id}/master.m3u8`)).body).includes('# rewritten'), 'the rewritten master served');
      assert.ok(Date.now() - t0 < 1000, `the old master was served for ${Date.now() - t0} ms`);
    } finally {
      await s.storage.put(`${keys.master(ws, pub.uuid)}`, original, { contentType: 'application/vnd.apple.mpegurl' });
    }
  });

  it('the bandwidth meter loses no bytes at close, even those recorded while a flush is in flight', async () => {
    const ws = await s.newWorkspace('pro');
    const month = monthOf();
    const meter = new BandwidthMeter(s.db, createLogger('silent'), 3_600_000);
    meter.record(ws.id, month, 1000);
    const inFlight = meter.flush();
    meter.record(ws.id, month, 234); // lands after the flush took its snapshot
    meter.record(ws.id, month, 5);
    await meter.close();
    await inFlight;
    const row = await s.db('bandwidth_usage').where({ workspace_id: ws.id, month }).first();
    assert.equal(Number(row?.bytes), 1239);
  });
});
