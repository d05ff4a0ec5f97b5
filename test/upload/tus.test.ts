import assert from 'node:assert/strict';
import fs from 'node:fs';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { keys, S3Storage } from '../../lib/storage';
import { parseVideoId } from '../../lib/ids';
import { recoverTusUploads } from '../../api/tus/recover';
import { createLogger } from '../../lib/logger';
import { fileSha, isStatus, storedSha, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { tusHead, tusUpload } from './tus-helpers';

async function initTus(s: Stack, clip: string, extra: Record<string, unknown> = {}) {
  const r = await s.post('/v1/upload/init', { filename: 'clip.mp4', size: fs.statSync(clip).size, content_type: 'video/mp4', upload_protocol: 'tus', ...extra });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.upload_protocol, 'tus');
  return r.body as { video_id: string; upload_url: string; storage_key: string };
}

/** Objects under the video's staging prefix, and (S3) multipart uploads still open there. */
async function staged(s: Stack, id: string): Promise<string[]> {
  const prefix = keys.uploadsPrefix(s.ws.id, parseVideoId(id)!);
  const out = await s.storage.list(prefix);
  if (s.storage instanceof S3Storage) {
    const r = await s.storage.client.send(new ListMultipartUploadsCommand({ Bucket: s.config.storage.s3.bucket, Prefix: prefix }));
    for (const u of r.Uploads ?? []) out.push(`multipart:${u.Key}`);
  }
  return out;
}

async function uploadedEvents(s: Stack, id: string): Promise<number> {
  const rows = await s.db('events').where({ video_id: parseVideoId(id)!, type: 'video.uploaded' });
  return rows.length;
}

for (const driver of ['local', 's3'] as const) {
  describe(`tus resumable uploads (${driver} storage)`, function () {
    let s: Stack;
    let clip: string;
    before(async function () {
      this.timeout(180_000);
      // A single PUT may carry at most 100 kB here, so the clip only fits through tus.
      s = await startStack({ storage: driver, env: { MAX_UPLOAD_BYTES: '100000' } });
      clip = await makeClip({ width: 640, height: 360, seconds: 3 });
      assert.ok(fs.statSync(clip).size > 100_000);
    });

    it('tus-js-client: abort at ~40%, HEAD shows the offset, a new Upload resumes from it, the last byte starts processing, ready', async function () {
      this.timeout(180_000);
      const size = fs.statSync(clip).size;
      const put = await s.post('/v1/upload/init', { filename: 'clip.mp4', size, content_type: 'video/mp4' });
      assert.equal(put.status, 400, 'beyond the single-PUT limit');
      const v = await initTus(s, clip);
      assert.ok(v.upload_url.startsWith(`${s.url}/upload/tus/`), v.upload_url);

      const first = tusUpload(clip, { uploadUrl: v.upload_url, abortAt: 0.4 });
      await first.aborted;
      const head = await tusHead(v.upload_url);
      assert.equal(head.status, 200);
      const offset = Number(head.headers.get('upload-offset'));
      assert.equal(Number(head.headers.get('upload-length')), size);
      assert.ok(offset > 0 && offset < size, `offset ${offset} of ${size}`);
      assert.equal((await s.get(`/v1/videos/${v.video_id}`)).body.status, 'pending_upload');

      const second = tusUpload(clip, { uploadUrl: v.upload_url });
      await second.done;
      assert.equal(second.patchOffsets[0], offset, 'resumed from the offset, not from zero');

      const ready = await waitForVideo(s, v.video_id, isStatus('ready'));
      assert.equal(ready.size_bytes, size);
      assert.equal(await storedSha(s, v.storage_key), fileSha(clip));
      assert.equal(await uploadedEvents(s, v.video_id), 1, 'video.uploaded once');
      // complete stays valid and idempotent.
      const again = await s.post('/v1/upload/complete', { video_id: v.video_id });
      assert.deepEqual([again.status, again.body.status], [200, 'ready']);

      // Single-use: the finished upload reports itself complete, and takes no more bytes.
      const after = await tusHead(v.upload_url);
      assert.equal(after.status, 200);
      assert.equal(after.headers.get('upload-offset'), String(size));
      const patch = await fetch(v.upload_url, {
        method: 'PATCH',
        headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(size), 'Content-Type': 'application/offset+octet-stream' },
        body: Buffer.from('more'),
      });
      assert.equal(patch.status, 409);
      assert.equal((await patch.json()).error.code, 'upload_closed');
      assert.equal(await storedSha(s, v.storage_key), fileSha(clip));
      assert.deepEqual(await staged(s, v.video_id), [], 'staging swept');
    });

    it('POST /upload/tus with a key: creation-with-upload and metadata; Location and Video-Id; ready', async function () {
      this.timeout(180_000);
      const run = tusUpload(clip, {
        endpoint: `${s.url}/v1/upload/tus`,
        headers: { Authorization: `Bearer ${s.ws.fullKey}` },
        metadata: { filename: 'server side.mp4', filetype: 'video/mp4', title: 'From a server', visibility: 'public' },
        chunkSize: 64 * 1024,
      });
      await run.done;
      assert.equal(run.created?.status, '201');
      const id = run.created?.videoId;
      assert.match(String(id), /^vid_[0-9a-f]{32}$/);
      assert.ok(run.created?.location?.startsWith(`${s.url}/upload/tus/`));
      const ready = await waitForVideo(s, id!, isStatus('ready'));
      assert.equal(ready.title, 'From a server');
      assert.equal(ready.visibility, 'public');
      assert.equal(ready.filename, 'server side.mp4');
      assert.equal(await uploadedEvents(s, id!), 1);
    });

    it('POST /upload/tus: 401 without a key, 403 for a read key, 400 for bad metadata, 413 past the resumable limit', async () => {
      const post = (headers: Record<string, string>) => fetch(`${s.url}/upload/tus`, { method: 'POST', headers: { 'Tus-Resumable': '1.0.0', ...headers } });
      const meta = `filename ${Buffer.from('a.mp4').toString('base64')},content_type ${Buffer.from('video/mp4').toString('base64')}`;
      assert.equal((await post({ 'Upload-Length': '10', 'Upload-Metadata': meta })).status, 401);
      assert.equal((await post({ 'Upload-Length': '10', 'Upload-Metadata': meta, 'X-API-Key': s.ws.readKey })).status, 403);
      const bad = await post({ 'Upload-Length': '10', 'Upload-Metadata': `filename ${Buffer.from('a.txt').toString('base64')},content_type ${Buffer.from('text/plain').toString('base64')}`, 'X-API-Key': s.ws.fullKey });
      assert.equal(bad.status, 400);
      assert.equal((await bad.json()).error.code, 'invalid_parameters');
      const big = await post({ 'Upload-Length': String(51 * 1024 ** 3), 'Upload-Metadata': meta, 'X-API-Key': s.ws.fullKey });
      assert.equal(big.status, 413);
      const noVersion = await fetch(`${s.url}/upload/tus`, { method: 'POST', headers: { 'Upload-Length': '10', 'Upload-Metadata': meta, 'X-API-Key': s.ws.fullKey } });
      assert.equal(noVersion.status, 412);
    });

    it('an offset that does not match → 409; a PATCH without Tus-Resumable → 412', async () => {
      const v = await initTus(s, clip);
      const patch = (headers: Record<string, string>) =>
        fetch(v.upload_url, { method: 'PATCH', headers: { 'Content-Type': 'application/offset+octet-stream', ...headers }, body: Buffer.alloc(10) });
      assert.equal((await patch({ 'Tus-Resumable': '1.0.0', 'Upload-Offset': '5' })).status, 409);
      assert.equal((await patch({ 'Upload-Offset': '0' })).status, 412);
      const head = await tusHead(v.upload_url);
      assert.equal(head.headers.get('upload-offset'), '0');
    });

    it('termination (DELETE) removes the partial data', async function () {
      this.timeout(60_000);
      const v = await initTus(s, clip);
      const run = tusUpload(clip, { uploadUrl: v.upload_url, abortAt: 0.4 });
      await run.aborted;
      assert.ok((await tusHead(v.upload_url)).headers.get('upload-offset') !== '0');
      const del = await fetch(v.upload_url, { method: 'DELETE', headers: { 'Tus-Resumable': '1.0.0' } });
      assert.equal(del.status, 204);
      assert.equal((await tusHead(v.upload_url)).status, 404);
      assert.deepEqual(await staged(s, v.video_id), []);
      // Termination gives the upload up: the video goes with it (issue 22; test/upload/tus-release.test.ts).
      const done = await s.post('/v1/upload/complete', { video_id: v.video_id });
      assert.equal(done.status, 404);
      assert.equal(done.body.error.code, 'not_found');
    });

    it('a finished upload whose completion was lost (API died after the last byte) is completed by the recovery pass', async function () {
      this.timeout(120_000);
      const v = await initTus(s, clip);
      const row = await s.db('videos').where({ id: parseVideoId(v.video_id)! }).first();
      // What the store leaves when every byte is in: the whole object at the upload's key.
      await s.storage.putFile(row.upload_key, clip, { contentType: 'video/mp4' });
      assert.equal((await s.get(`/v1/videos/${v.video_id}`)).body.status, 'pending_upload');
      const deps = { config: s.config, db: s.db, storage: s.storage, temporal: s.temporal, log: createLogger('silent', 'test') };
      assert.equal(await recoverTusUploads(deps), 1);
      await waitForVideo(s, v.video_id, isStatus('ready'));
      assert.equal(await recoverTusUploads(deps), 0, 'nothing left to recover');
    });

    it('CORS: preflight and answers carry the video’s cors_origin and the tus headers', async () => {
      const v = await initTus(s, clip, { cors_origin: 'https://app.example.com' });
      const pre = await fetch(v.upload_url, { method: 'OPTIONS', headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'PATCH' } });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get('access-control-allow-origin'), 'https://app.example.com');
      assert.match(pre.headers.get('access-control-allow-methods') ?? '', /PATCH/);
      assert.match(pre.headers.get('access-control-allow-methods') ?? '', /HEAD/);
      assert.match(pre.headers.get('access-control-allow-headers') ?? '', /Upload-Offset/);
      assert.match(pre.headers.get('access-control-allow-headers') ?? '', /Content-Type/);
      const head = await fetch(v.upload_url, { method: 'HEAD', headers: { Origin: 'https://app.example.com', 'Tus-Resumable': '1.0.0' } });
      assert.equal(head.headers.get('access-control-allow-origin'), 'https://app.example.com');
      assert.match(head.headers.get('access-control-expose-headers') ?? '', /Upload-Offset/);
    });
  });
}

describe('tus upload expiry', function () {
  for (const driver of ['local', 's3'] as const) {
    it(`an unfinished upload expires with its URL: 410, and nothing is left in storage (${driver})`, async function () {
      this.timeout(120_000);
      const s = await startStack({ storage: driver, env: { UPLOAD_URL_TTL_SECONDS: '4', UPLOAD_GRACE_SECONDS: '1' } });
      const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
      const v = await initTus(s, clip);
      const run = tusUpload(clip, { uploadUrl: v.upload_url, abortAt: 0.3, chunkSize: 16 * 1024 });
      await run.aborted;
      const failed = await waitForVideo(s, v.video_id, isStatus('failed'), 60_000);
      assert.equal(failed.error_code, 'upload_expired');
      const head = await tusHead(v.upload_url);
      assert.ok([404, 410].includes(head.status), String(head.status));
      const patch = await fetch(v.upload_url, {
        method: 'PATCH',
        headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
        body: Buffer.alloc(4),
      });
      assert.ok([404, 410].includes(patch.status), String(patch.status));
      assert.deepEqual(await staged(s, v.video_id), []);
    });
  }
});
