import assert from 'node:assert/strict';
import { type LiveStack, pushRtmp, startLiveStack, waitFor } from './helpers';

describe('live: stream health of an RTMP broadcast (SPEC §22)', function () {
  this.timeout(150_000);
  let s: LiveStack;
  before(async () => {
    s = await startLiveStack();
  });
  after(async () => {
    await s?.close();
  });

  it('reads the feed while active (protocol, codecs, size, fps, bitrate, keyframe interval), warns about 5 s keyframes once, and clears on idle', async () => {
    const ls = (await s.post('/v1/live-streams', { title: 'health', reconnect_window: 0 }).expect(201)).body;
    assert.equal(ls.health, null);
    // A small feed (320x180, 15 fps: the session copies it, no rung to encode) with 5 s keyframes.
    const cam = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 90, size: '320x180', fps: 15, gop: 5 });
    try {
      const h = await waitFor('health with the keyframe interval', async () => {
        const r = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
        return r.status === 'active' && r.health?.keyframe_interval_s >= 4.9 && r.health;
      }, 90_000, 500);
      assert.equal(h.protocol, 'rtmp');
      assert.deepEqual({ ...h.video, fps: Math.round(h.video.fps) }, { codec: 'h264', width: 320, height: 180, fps: 15 });
      assert.equal(h.audio.codec, 'aac');
      assert.ok(h.bitrate_kbps > 10, `bitrate ${h.bitrate_kbps}`);
      assert.ok(Math.abs(h.keyframe_interval_s - 5) < 0.2, `keyframe interval ${h.keyframe_interval_s}`);
      assert.deepEqual(h.warnings.map((w: { code: string }) => w.code), ['keyframe_interval_high']);
      const events = await waitFor('warning event', async () => {
        const rows = await s.db('events').where({ workspace_id: ls.workspace_id ?? (await s.db('live_streams').where({ id: ls.id }).first('workspace_id')).workspace_id, type: 'live_stream.warning' });
        return rows.length > 0 && rows;
      }, 20_000);
      await new Promise((r) => setTimeout(r, 5000));
      const again = await s.db('events').where({ type: 'live_stream.warning' }).whereRaw(`payload->'data'->'live_stream'->>'id' = ?`, [ls.id]);
      assert.equal(again.length, 1, 'the warning is sent once per connection');
      assert.equal(events[0].payload.data.warning.code, 'keyframe_interval_high');
      assert.equal(events[0].payload.data.live_stream.id, ls.id);
    } finally {
      cam.stop();
    }
    await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
    await waitFor('idle', async () => (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.status === 'idle', 30_000);
    assert.equal((await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.health, null);
  });
});
