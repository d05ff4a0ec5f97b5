import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { allRunEvents, isStatus, putFile, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip, truncatedCopy } from '../support/media';
import { startStack, type Stack } from '../support/stack';

function sameSizeGarbage(like: string): string {
  const size = fs.statSync(like).size;
  const out = path.join(os.tmpdir(), `vidhost-garbage-${size}.mp4`);
  fs.writeFileSync(out, Buffer.alloc(size, 'this is not a video\n'));
  return out;
}

async function init(s: Stack, file: string, declared = fs.statSync(file).size) {
  const r = await s.post('/v1/upload/init', { filename: path.basename(file), size: declared, content_type: 'video/mp4' });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body as { video_id: string; upload_url: string; upload_headers: Record<string, string> };
}

describe('upload failures and retries', function () {
  let s: Stack;
  before(async function () {
    this.timeout(180_000);
    s = await startStack();
  });

  it('complete without an upload → 400 upload_missing, still pending_upload; twice → same answer', async () => {
    const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
    const v = await init(s, clip);
    for (let i = 0; i < 2; i++) {
      const r = await s.post('/v1/upload/complete', { video_id: v.video_id });
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'upload_missing');
    }
    const b = await s.post(`/upload/confirm/${v.video_id}`);
    assert.equal(b.status, 400);
    assert.equal(b.body.success, false);
    assert.equal(b.body.error.code, 'upload_missing');
    assert.equal((await s.get(`/v1/videos/${v.video_id}`)).body.status, 'pending_upload');
  });

  it('an object of another size than declared → 400 upload_size_mismatch', async () => {
    const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
    const v = await init(s, clip);
    // Write a shorter object straight to storage (a presigned URL would refuse it).
    await s.storage.put((await s.get(`/v1/videos/${v.video_id}`)).body.storage_key, Buffer.from('short'));
    const r = await s.post('/v1/upload/complete', { video_id: v.video_id });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'upload_size_mismatch');
    assert.equal((await s.get(`/v1/videos/${v.video_id}`)).body.status, 'pending_upload');
  });

  it('complete is idempotent: 202 the first time, 200 with the current status after', async function () {
    this.timeout(120_000);
    const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
    const { id } = await uploadFormA(s, clip);
    const again = await s.post('/v1/upload/complete', { video_id: id });
    assert.equal(again.status, 200);
    assert.ok(['processing', 'ready'].includes(again.body.status));
    await waitForVideo(s, id, isStatus('ready'));
    const late = await s.post('/v1/upload/complete', { video_id: id });
    assert.deepEqual([late.status, late.body.status], [200, 'ready']);
  });

  it('a file that is not video → failed invalid_media with a clear message, no retries; retry after re-upload → ready', async function () {
    this.timeout(120_000);
    const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
    const garbage = sameSizeGarbage(clip);
    const v = await init(s, garbage);
    assert.equal((await putFile(v.upload_url, garbage)).status, 200);
    assert.equal((await s.post('/v1/upload/complete', { video_id: v.video_id })).status, 202);
    const failed = await waitForVideo(s, v.video_id, isStatus('failed'));
    assert.equal(failed.error_code, 'invalid_media');
    assert.match(failed.error_message, /could not be decoded/i);
    assert.equal(failed.hls_url, null);

    // The probe ran once: a media error is not retried.
    const events = await allRunEvents(s, `video-${failed.uuid}`);
    const probes = events.filter((e) => ['probeSource', 'planTranscode'].includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''));
    const attempts = events.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt);
    assert.equal(probes.length, 1);
    assert.ok(attempts.every((a) => a === 1), `attempts: ${attempts}`);

    // Upload URLs are single-use (SPEC §12): the used URL is closed, even though it has not expired.
    const reuse = await putFile(v.upload_url, clip);
    assert.equal(reuse.status, 409);
    assert.equal((await reuse.json()).error.code, 'upload_closed');
    // An operator replaces the original in storage and retries.
    await s.storage.putFile(failed.storage_key, clip, { contentType: 'video/mp4' });
    const retry = await s.post(`/v1/videos/${v.video_id}/retry`);
    assert.equal(retry.status, 202, JSON.stringify(retry.body));
    assert.equal(retry.body.status, 'processing');
    const ready = await waitForVideo(s, v.video_id, isStatus('ready'));
    assert.equal(ready.error_code, undefined);
    const twice = await s.post(`/v1/videos/${v.video_id}/retry`);
    assert.equal(twice.status, 409);
  });

  it('a truncated MP4 → failed invalid_media', async function () {
    this.timeout(120_000);
    const clip = await makeClip({ width: 320, height: 180, seconds: 4 });
    const { id } = await uploadFormA(s, truncatedCopy(clip, 0.5));
    const failed = await waitForVideo(s, id, isStatus('failed'));
    assert.equal(failed.error_code, 'invalid_media');
    assert.ok(failed.error_message.length > 10);
  });

  // Audio-only files are media since SPEC §19 (test/audio/audio-only.test.ts); a file with
  // neither video nor audio (a subtitle track alone) is still no_video_stream.
  it('a file with no video or audio stream → failed no_video_stream', async function () {
    this.timeout(120_000);
    const file = path.join(os.tmpdir(), 'vidhost-subtitles-only.mkv');
    if (!fs.existsSync(file)) {
      const { execFileSync } = await import('node:child_process');
      const srt = path.join(os.tmpdir(), 'vidhost-subtitles-only.srt');
      fs.writeFileSync(srt, '1\n00:00:00,000 --> 00:00:01,000\nHello\n');
      execFileSync('ffmpeg', ['-loglevel', 'error', '-y', '-i', srt, '-c:s', 'srt', file]);
    }
    const { id } = await uploadFormA(s, file);
    const failed = await waitForVideo(s, id, isStatus('failed'));
    assert.equal(failed.error_code, 'no_video_stream');
  });

  it('retry of a video that is not failed → 409', async () => {
    const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
    const v = await init(s, clip);
    const r = await s.post(`/v1/videos/${v.video_id}/retry`);
    assert.equal(r.status, 409);
    assert.equal(r.body.error.code, 'invalid_state');
  });
});

describe('upload expiry', function () {
  it('no upload within the URL validity + grace → failed upload_expired', async function () {
    this.timeout(120_000);
    const s = await startStack({ env: { UPLOAD_URL_TTL_SECONDS: '1', UPLOAD_GRACE_SECONDS: '1' } });
    const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
    const v = await init(s, clip);
    assert.equal(v.upload_url.length > 0, true);
    const failed = await waitForVideo(s, v.video_id, isStatus('failed'), 30_000);
    assert.equal(failed.error_code, 'upload_expired');
    // The URL itself has expired too.
    const late = await putFile(v.upload_url, clip);
    assert.equal(late.status, 403);
  });
});
