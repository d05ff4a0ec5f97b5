import assert from 'node:assert/strict';
import { allRenditionsReady, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { waitFor } from '../webhooks/receiver';

describe('Outputs: passthrough and max_resolution (SPEC §14)', function () {
  let s: Stack;
  before(async function () {
    this.timeout(120_000);
    s = await startStack();
  });

  it('stores passthrough from init and presigned, returns it in reads, PATCH changes or clears it', async () => {
    const init = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 10, content_type: 'video/mp4', passthrough: 'order-42' }).expect(201);
    const read = await s.get(`/v1/videos/${init.body.video_id}`).expect(200);
    assert.equal(read.body.passthrough, 'order-42');
    assert.equal(read.body.mp4_support, 'none');
    assert.deepEqual(read.body.static_renditions, []);
    assert.deepEqual(read.body.captions, []);
    assert.equal(read.body.storyboard_url, null);
    assert.equal(read.body.source_video_id, null);

    const pre = await s.post('/v1/upload/presigned', { workspace_id: s.ws.id, filename: 'b.mp4', file_size: 10, content_type: 'video/mp4', passthrough: 'x'.repeat(255) }).expect(201);
    const b = await s.get(`/v1/videos/${pre.body.data.video_id}`).expect(200);
    assert.equal(b.body.passthrough, 'x'.repeat(255));

    const p = await s.patch(`/v1/videos/${init.body.video_id}`, { passthrough: 'order-43' }).expect(200);
    assert.equal(p.body.passthrough, 'order-43');
    const list = await s.get('/v1/videos?limit=100').expect(200);
    assert.equal(list.body.data.find((v: { id: string }) => v.id === init.body.video_id).passthrough, 'order-43');
    const cleared = await s.patch(`/v1/videos/${init.body.video_id}`, { passthrough: null }).expect(200);
    assert.equal(cleared.body.passthrough, null);
  });

  it('refuses a passthrough over 255 characters and unknown max_resolution or mp4_support values', async () => {
    const long = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 10, content_type: 'video/mp4', passthrough: 'x'.repeat(256) });
    assert.equal(long.status, 400);
    assert.equal(long.body.error.code, 'invalid_parameters');
    assert.equal(long.body.error.details[0].field, 'passthrough');
    for (const extra of [{ max_resolution: '360p' }, { max_resolution: '4k' }, { mp4_support: 'standard' }]) {
      const r = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 10, content_type: 'video/mp4', ...extra });
      assert.equal(r.status, 400, JSON.stringify(extra));
    }
    const init = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 10, content_type: 'video/mp4' }).expect(201);
    const patch = await s.patch(`/v1/videos/${init.body.video_id}`, { passthrough: 'y'.repeat(256) });
    assert.equal(patch.status, 400);
    // max_resolution is a creation setting: the ladder is planned once.
    const late = await s.patch(`/v1/videos/${init.body.video_id}`, { max_resolution: '480p' });
    assert.equal(late.status, 400);
  });

  it('max_resolution caps the ladder; video.ready carries passthrough and the new fields', async function () {
    this.timeout(180_000);
    const clip = await makeClip({ width: 1280, height: 720, seconds: 2 });
    const up = await uploadFormA(s, clip, { extra: { max_resolution: '480p', passthrough: 'cap-test' } });
    const v = await waitForVideo(s, up.id, allRenditionsReady, 150_000);
    assert.deepEqual(v.renditions.map((r: { name: string }) => r.name), ['240p', '360p', '480p']);
    assert.equal(v.max_resolution, '480p');
    // The event is written by the activity after the one that writes `ready`: wait for it.
    const ev = await waitFor('video.ready recorded', () => s.db('events').where({ video_id: v.uuid, type: 'video.ready' }).first(), 20_000);
    const payload = typeof ev.payload === 'string' ? JSON.parse(ev.payload) : ev.payload;
    assert.equal(payload.data.video.passthrough, 'cap-test');
    assert.equal(payload.data.video.max_resolution, '480p');
    assert.ok(Array.isArray(payload.data.video.static_renditions));
    assert.ok(Array.isArray(payload.data.video.captions));
  });
});
