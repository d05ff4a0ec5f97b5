import assert from 'node:assert/strict';
import { allRenditionsReady, until, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { cdnGet, probeBytes } from './helpers';

describe('Outputs: clips (SPEC §14)', function () {
  this.timeout(180_000);
  let s: Stack;
  let pub: Record<string, any>;
  let priv: Record<string, any>;
  const FPS = 24;

  before(async function () {
    this.timeout(300_000);
    s = await startStack();
    const clip = await makeClip({ width: 320, height: 180, seconds: 6, fps: FPS });
    const [a, b] = await Promise.all([uploadFormA(s, clip, { extra: { visibility: 'public', title: 'Source' } }), uploadFormA(s, clip, { extra: { visibility: 'private' } })]);
    [pub, priv] = await Promise.all([waitForVideo(s, a.id, allRenditionsReady, 240_000), waitForVideo(s, b.id, allRenditionsReady, 240_000)]);
  });

  it('cuts a frame-accurate clip into a new video with its own workflow and the usual events', async () => {
    const r = await s.post(`/v1/videos/${pub.id}/clips`, { start_time: 1.5, end_time: 4.25, passthrough: 'clip-1', mp4_support: 'capped_1080p' });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.notEqual(r.body.id, pub.id);
    assert.equal(r.body.source_video_id, pub.id);
    assert.equal(r.body.status, 'processing');
    assert.equal(r.body.title, 'Source (clip)');
    assert.equal(r.body.visibility, 'public');
    assert.equal(r.body.passthrough, 'clip-1');
    const clip = await waitForVideo(s, r.body.id, allRenditionsReady, 150_000);
    assert.ok(Math.abs(clip.duration_seconds - 2.75) <= 1 / FPS + 1e-6, `clip lasts ${clip.duration_seconds} s, expected 2.75 ± one frame`);
    // The clip's own original, probed: the video stream is the range, within one frame.
    const original = await s.storage.get(clip.storage_key);
    assert.ok(original);
    const chunks: Buffer[] = [];
    for await (const c of original.body) chunks.push(c as Buffer);
    const info = await probeBytes(Buffer.concat(chunks), 'mp4');
    const video = info.streams.find((x) => x.codec_type === 'video')!;
    assert.ok(Math.abs(Number(video.duration) - 2.75) <= 1 / FPS + 1e-6, `video stream lasts ${video.duration}`);
    assert.ok(info.streams.some((x) => x.codec_type === 'audio'), 'audio kept');
    const handle = s.temporal.workflow.getHandle(`video-${clip.uuid}`);
    assert.equal((await handle.describe()).status.name, 'RUNNING', 'the clip has its own entity workflow');
    // video.ready is written by the activity after the one that writes the status (the read above
    // can see `ready` first on a loaded machine): wait for the event, then check it is the only one.
    const eventsOf = () => s.db('events').where({ video_id: clip.uuid }).orderBy('created_at').pluck('type');
    await until(async () => (await eventsOf()).includes('video.ready'), 20_000, 'the clip\'s video.ready event', 100);
    assert.deepEqual(await eventsOf(), ['video.ready']);
    const listed = await s.get(`/v1/videos/${clip.id}`).expect(200);
    assert.equal(listed.body.source_video_id, pub.id);
    await cdnGet(s, `/v/${clip.id}/master.m3u8`).expect(200);
  });

  it('clips a private video into a private clip that needs a token', async () => {
    const r = await s.post(`/v1/videos/${priv.id}/clips`, { start_time: 0, end_time: 2, title: 'Secret part' });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.equal(r.body.visibility, 'private');
    const clip = await waitForVideo(s, r.body.id, allRenditionsReady, 150_000);
    assert.ok(Math.abs(clip.duration_seconds - 2) <= 1 / FPS + 1e-6);
    await cdnGet(s, `/v/${clip.id}/master.m3u8`).expect(403);
    const { body } = await s.get(`/v1/playback/${clip.id}`).expect(200);
    await cdnGet(s, `/v/${body.token}/master.m3u8`).expect(200);
  });

  it('400 for bad ranges and bodies, 409 for a source that is not ready, 404 for others', async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ start_time: 3, end_time: 2 }, 'invalid_range'],
      [{ start_time: 2, end_time: 2 }, 'invalid_range'],
      [{ start_time: 0, end_time: 6.5 }, 'invalid_range'],
      [{ start_time: 6, end_time: 7 }, 'invalid_range'],
      [{ start_time: -1, end_time: 2 }, 'invalid_parameters'],
      [{ start_time: 0 }, 'invalid_parameters'],
      [{ start_time: '0', end_time: '2' }, 'invalid_parameters'],
      [{ start_time: 0, end_time: 2, visibility: 'secret' }, 'invalid_parameters'],
      [{ start_time: 0, end_time: 2, extra: 1 }, 'invalid_parameters'],
    ];
    for (const [body, code] of bad) {
      const r = await s.post(`/v1/videos/${pub.id}/clips`, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, code, JSON.stringify(body));
    }
    const pending = await s.post('/v1/upload/init', { filename: 'p.mp4', size: 10, content_type: 'video/mp4' }).expect(201);
    const r = await s.post(`/v1/videos/${pending.body.video_id}/clips`, { start_time: 0, end_time: 1 });
    assert.equal(r.status, 409);
    assert.equal(r.body.error.code, 'not_ready');
    const other = await s.newWorkspace();
    const foreign = await s.post(`/v1/videos/${pub.id}/clips`, { start_time: 0, end_time: 1 }, other.fullKey);
    assert.equal(foreign.status, 404);
    const readOnly = await s.post(`/v1/videos/${pub.id}/clips`, { start_time: 0, end_time: 1 }, s.ws.readKey);
    assert.equal(readOnly.status, 403);
  });
});
