import assert from 'node:assert/strict';
import { type LiveStack, pushRtmp, startLiveStack, waitFor, waitLive } from './helpers';

describe('live: RTMP in, HLS out, recorded', function () {
  this.timeout(120_000);
  let s: LiveStack;
  before(async () => {
    s = await startLiveStack();
  });
  after(() => s?.close());

  it('creates a stream with a key shown once', async () => {
    const res = await s.post('/v1/live-streams', { title: 'hello' }).expect(201);
    assert.match(res.body.id, /^ls_[0-9a-f]{32}$/);
    assert.match(res.body.stream_key, /^lsk[0-9a-f]{32}$/);
    assert.equal(res.body.status, 'idle');
    assert.ok(res.body.ingest.srt_url.includes(res.body.stream_key));
    const offAir = await fetch(res.body.embed_url);
    assert.equal(offAir.status, 200);
    assert.match(await offAir.text(), /not on air/);
    const read = await s.get(`/v1/live-streams/${res.body.id}`).expect(200);
    assert.equal(read.body.stream_key, undefined);
    assert.ok(!JSON.stringify(read.body).includes(res.body.stream_key));
  });

  it('refuses a wrong key at connect', async () => {
    const p = pushRtmp(`${s.rtmpBase}/lsk${'0'.repeat(32)}`, { seconds: 20 });
    const code = await Promise.race([p.done, new Promise((r) => setTimeout(() => r('still running'), 8000))]);
    p.stop();
    assert.notEqual(code, 'still running', 'the encoder was not dropped');
    assert.notEqual(code, 0);
  });

  it('goes active, plays live, and the broadcast becomes a ready recording', async () => {
    const created = (await s.post('/v1/live-streams', { title: 'show', reconnect_window: 2, new_video_settings: { visibility: 'public', tags: ['live'], mp4_support: 'capped_1080p' } }).expect(201)).body;
    const p = pushRtmp(`${s.rtmpBase}/${created.stream_key}`, { seconds: 30, size: '640x360' });
    try {
      const active = await waitLive(s, created.id);
      assert.ok(active.active_video_id);
      const master = await fetch(created.hls_url);
      assert.equal(master.status, 200);
      const text = await master.text();
      assert.match(text, /#EXT-X-STREAM-INF/);
      assert.match(text, /source\/index\.m3u8/);
      assert.match(text, /240p\/index\.m3u8/);
      const media = await (await fetch(created.hls_url.replace('master.m3u8', '240p/index.m3u8'))).text();
      assert.match(media, /#EXT-X-PROGRAM-DATE-TIME:/);
      const seg = /^(seg_\d{6}\.ts)$/m.exec(media)![1];
      const segRes = await fetch(created.hls_url.replace('master.m3u8', `240p/${seg}`));
      assert.equal(segRes.status, 200);
      assert.equal((await segRes.arrayBuffer()).byteLength > 1000, true);
      const embedLive = await (await fetch(created.embed_url)).text();
      assert.match(embedLive, /data-live="1"/);
      assert.ok(embedLive.includes(`/live/${created.id}/master.m3u8`));
      const video = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body;
      assert.equal(video.is_live, true);
      assert.equal(video.live_stream_id, created.id);
      assert.equal(video.status, 'processing');

      await s.post(`/v1/live-streams/${created.id}/complete`).expect(200);
      const endedAt = Date.now();
      const ready = await waitFor('recording ready', async () => {
        const v = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body;
        return v.status === 'ready' && v;
      }, 20_000);
      const took = Date.now() - endedAt;
      assert.ok(took < 10_000, `ready ${took} ms after the end`);
      assert.equal(ready.is_live, false);
      assert.equal(ready.visibility, 'public');
      assert.deepEqual(ready.tags, ['live']);
      assert.ok(ready.duration_seconds > 1);
      const vod = await (await fetch(ready.hls_url)).text();
      assert.match(vod, /source\/index\.m3u8/);
      const vodMedia = await (await fetch(ready.hls_url.replace('master.m3u8', 'source/index.m3u8'))).text();
      assert.match(vodMedia, /#EXT-X-ENDLIST/);
      const embedAfter = await (await fetch(created.embed_url)).text();
      assert.ok(embedAfter.includes(`/v/${ready.id}/master.m3u8`), 'the embed does not play the recording');
      assert.doesNotMatch(embedAfter, /data-live/);
      // The workflow marks the recording ready inside finishBroadcast and sets the stream idle in
      // its next step (workflows/live/stream.ts): a read between the two saw 'disconnected' under load.
      const ls = await waitFor('the stream idle', async () => {
        const r = (await s.get(`/v1/live-streams/${created.id}`).expect(200)).body;
        return r.status === 'idle' && r;
      }, 10_000);
      assert.deepEqual(ls.recent_video_ids, [ready.id]);
      // As for an upload: a poster, seek previews and the static MP4 of mp4_support.
      assert.equal((await fetch(ready.thumbnail_url)).status, 200);
      const outputs = await waitFor('storyboard and MP4', async () => {
        const v = (await s.get(`/v1/videos/${ready.id}`).expect(200)).body;
        return v.storyboard_url && v.static_renditions?.[0]?.status === 'ready' && v;
      }, 60_000);
      assert.match(await (await fetch(outputs.storyboard_url)).text(), /^WEBVTT/);
      const mp4 = await fetch(outputs.static_renditions[0].url);
      assert.equal(mp4.status, 200);
      assert.ok((await mp4.arrayBuffer()).byteLength > 10_000);
    } finally {
      p.stop();
    }
  });

  it('drops a feed outside the input bounds, saying why in live_stream.disconnected', async () => {
    const ls = (await s.post('/v1/live-streams', { reconnect_window: 0 }).expect(201)).body;
    const p = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 30, size: '160x120', fps: 90 });
    try {
      const code = await Promise.race([p.done, new Promise((r) => setTimeout(() => r('still running'), 30_000))]);
      assert.notEqual(code, 'still running', 'the encoder was not dropped');
      const idle = await waitFor('idle', async () => {
        const r = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
        return r.status === 'idle' && r.last_disconnect_reason && r;
      });
      assert.match(idle.last_disconnect_reason, /input out of bounds: .*over 60/);
      assert.deepEqual(idle.recent_video_ids, [], 'a broadcast with no segment left a video');
      const ev = await waitFor('event', () => s.db('events').where({ type: 'live_stream.disconnected' }).whereRaw(`payload->'data'->'live_stream'->>'id' = ?`, [ls.id]).first());
      assert.match(ev.payload.data.reason, /over 60/);
    } finally {
      p.stop();
    }
  });
});
