import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { keys } from '../../lib/storage';
import { parseVideoId } from '../../lib/ids';
import { allRenditionsReady, isStatus, putFile, uploadFormA, waitForVideo } from '../support/flow';
import { ffprobeJson, makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

/** Fetches the HLS master and every variant from storage and checks ffprobe can read each variant. */
async function assertPlayable(s: Stack, video: Record<string, any>, expectedRungs: string[]): Promise<void> {
  const uuid = parseVideoId(video.id)!;
  const master = await s.storage.get(keys.master(s.ws.id, uuid));
  assert.ok(master, 'master playlist exists');
  const text = (await streamText(master.body)).trim();
  const uris = text.split('\n').filter((l) => l && !l.startsWith('#'));
  assert.deepEqual(uris, expectedRungs.map((r) => `${r}/index.m3u8`));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-play-'));
  try {
    for (const rung of expectedRungs) {
      const prefix = keys.rendition(s.ws.id, uuid, rung);
      for (const key of await s.storage.list(prefix)) await s.storage.download(key, path.join(dir, rung, key.slice(prefix.length)));
      const probe = await ffprobeJson(path.join(dir, rung, 'index.m3u8'));
      const v = probe.streams.find((st) => st.codec_type === 'video');
      assert.equal(v?.codec_name, 'h264', rung);
      assert.equal(`${Math.min(Number(v?.width), Number(v?.height))}p`, rung, 'the rung is named by its short side');
    }
    const thumb = await s.storage.get(keys.thumbnail(s.ws.id, uuid));
    assert.ok(thumb, 'thumbnail exists');
    const head = await streamBuffer(thumb.body);
    assert.equal(head.subarray(0, 3).toString('hex'), 'ffd8ff', 'thumbnail is a JPEG');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function streamBuffer(body: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks);
}
const streamText = async (body: NodeJS.ReadableStream) => (await streamBuffer(body)).toString('utf8');

for (const driver of ['local', 's3'] as const) {
  describe(`upload to HLS (${driver} storage)`, function () {
    let s: Stack;
    before(async function () {
      this.timeout(180_000);
      s = await startStack({ storage: driver });
    });

    it('Form A: init → PUT → complete → ready, with every rung playable and a JPEG thumbnail', async function () {
      this.timeout(180_000);
      const clip = await makeClip({ width: 640, height: 360, seconds: 3 });
      const { id } = await uploadFormA(s, clip, { prefix: '/api/v1' });
      assert.match(id, /^vid_[0-9a-f]{32}$/);
      const ready = await waitForVideo(s, id, isStatus('ready'));
      assert.ok(ready.hls_url.endsWith(`/v/${id}/master.m3u8`));
      assert.ok(ready.thumbnail_url.endsWith('/thumbnail.jpg'));
      const done = await waitForVideo(s, id, allRenditionsReady);
      assert.deepEqual(done.renditions.map((r: { name: string }) => r.name), ['240p', '360p']);
      assert.equal(done.width, 640);
      assert.equal(done.height, 360);
      assert.ok(Math.abs(done.duration_seconds - 3) < 0.3, String(done.duration_seconds));
      assert.equal(done.size_bytes, fs.statSync(clip).size);
      assert.equal(done.progress, 100);
      await assertPlayable(s, done, ['240p', '360p']);
    });

    it('Form B: presigned → PUT → confirm answers in an envelope, "uploading" before and "ready" after', async function () {
      this.timeout(180_000);
      const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
      const size = fs.statSync(clip).size;
      const pre = await s.post('/upload/presigned', { workspace_id: s.ws.id, filename: 'b.mp4', content_type: 'video/mp4', file_size: size });
      assert.equal(pre.status, 201, JSON.stringify(pre.body));
      assert.equal(pre.body.success, true);
      const { video_id, upload_url, storage_key } = pre.body.data;
      assert.match(video_id, /^[0-9a-f-]{36}$/);
      assert.equal(storage_key, `originals/${s.ws.id}/${video_id}/b.mp4`);
      const before = await s.get(`/videos/${video_id}`);
      assert.equal(before.body.status, 'pending_upload');
      assert.equal((await putFile(upload_url, clip)).status, 200);
      const confirm = await s.post(`/upload/confirm/${video_id}`);
      assert.equal(confirm.status, 200, JSON.stringify(confirm.body));
      assert.deepEqual(confirm.body, { success: true, data: { video_id, status: 'ready' } });
      const again = await s.post(`/v1/upload/confirm/${video_id}`);
      assert.deepEqual(again.body, { success: true, data: { video_id, status: 'ready' } });
    });

    it('Form C: X-API-Key, no prefix; a portrait source scales by its short side', async function () {
      this.timeout(180_000);
      const clip = await makeClip({ width: 360, height: 640, seconds: 2 });
      const size = fs.statSync(clip).size;
      const init = await request(s.url).post('/upload/init').set('X-API-Key', s.ws.fullKey).send({ filename: 'p.mp4', size, content_type: 'video/mp4' });
      assert.equal(init.status, 201);
      assert.equal((await putFile(init.body.upload_url, clip, 'video/mp4', init.body.upload_headers)).status, 200);
      const done = await request(s.url).post('/upload/complete').set('X-API-Key', s.ws.fullKey).send({ video_id: init.body.video_id });
      assert.equal(done.status, 202);
      assert.deepEqual(done.body, { video_id: init.body.video_id, status: 'processing' });
      const v = await waitForVideo(s, init.body.video_id, allRenditionsReady);
      assert.deepEqual(
        v.renditions.map((r: { name: string; width: number; height: number }) => `${r.name}:${r.width}x${r.height}`),
        ['240p:240x426', '360p:360x640'],
      );
      await assertPlayable(s, v, ['240p', '360p']);
    });
  });
}

describe('upload edge cases', function () {
  let s: Stack;
  before(async function () {
    this.timeout(180_000);
    s = await startStack();
  });

  it('a source smaller than 240p gets one rung at its own size', async function () {
    this.timeout(120_000);
    const clip = await makeClip({ width: 160, height: 90, seconds: 2, audio: false });
    const { id } = await uploadFormA(s, clip);
    const v = await waitForVideo(s, id, allRenditionsReady);
    assert.deepEqual(v.renditions.map((r: { name: string; width: number; height: number }) => `${r.name}:${r.width}x${r.height}`), ['90p:160x90']);
  });
});
