import assert from 'node:assert/strict';
import { type LiveStack, pushRtmp, startLiveStack, waitFor } from './helpers';

describe('live: disconnect and reconnect', function () {
  this.timeout(120_000);
  let s: LiveStack;
  before(async () => {
    s = await startLiveStack();
  });
  after(() => s?.close());

  const read = async (id: string) => (await s.get(`/v1/live-streams/${id}`).expect(200)).body;

  it('a reconnect inside reconnect_window continues the same recording (with a discontinuity)', async () => {
    const ls = (await s.post('/v1/live-streams', { reconnect_window: 30 }).expect(201)).body;
    const url = `${s.rtmpBase}/${ls.stream_key}`;
    const first = pushRtmp(url, { seconds: 60 });
    const t0 = Date.now();
    const active = await waitFor('active', async () => {
      const r = await read(ls.id);
      return r.status === 'active' && r;
    });
    if (process.env.TEST_LOG_LEVEL) console.log('active after', Date.now() - t0, 'ms');
    // The encoder leaves once the broadcast is playable (SIGINT: ffmpeg ends its stream as at -t).
    first.stop();
    await first.done;
    const gone = await waitFor('disconnected', async () => {
      const r = await read(ls.id);
      return r.status === 'disconnected' && r;
    });
    assert.equal(gone.last_disconnect_reason, 'encoder disconnected');
    const second = pushRtmp(url, { seconds: 60 });
    try {
      const again = await waitFor('active again', async () => {
        const r = await read(ls.id);
        return r.status === 'active' && r;
      });
      assert.equal(again.active_video_id, active.active_video_id, 'a new recording was started');
      await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
      const video = await waitFor('ready', async () => {
        const v = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body;
        return v.status === 'ready' && v;
      });
      const media = await (await fetch(video.hls_url.replace('master.m3u8', 'source/index.m3u8'))).text();
      assert.equal(media.match(/#EXT-X-DISCONTINUITY\n/g)?.length, 1, media);
      const events: string[] = await waitFor('video.ready', async () => {
        const types: string[] = await s.db('events').where({ workspace_id: s.ws.id }).orderBy('created_at').pluck('type');
        return types.includes('video.ready') && types;
      });
      const mine = events.filter((t: string) => t.startsWith('live_stream.'));
      assert.deepEqual(mine.slice(0, 6), ['live_stream.connected', 'live_stream.active', 'live_stream.disconnected', 'live_stream.active', 'live_stream.disconnected', 'live_stream.idle']);
    } finally {
      second.stop();
    }
  });

  it('a reconnect after the window starts a new recording', async () => {
    const ls = (await s.post('/v1/live-streams', { reconnect_window: 1 }).expect(201)).body;
    const url = `${s.rtmpBase}/${ls.stream_key}`;
    const first = pushRtmp(url, { seconds: 60 });
    const active = await waitFor('active', async () => {
      const r = await read(ls.id);
      return r.status === 'active' && r;
    });
    first.stop();
    await first.done;
    const idle = await waitFor('idle', async () => {
      const r = await read(ls.id);
      return r.status === 'idle' && r.recent_video_ids.length === 1 && r;
    });
    assert.deepEqual(idle.recent_video_ids, [active.active_video_id]);
    const second = pushRtmp(url, { seconds: 60 });
    try {
      const again = await waitFor('active again', async () => {
        const r = await read(ls.id);
        return r.status === 'active' && r;
      });
      assert.notEqual(again.active_video_id, active.active_video_id);
      const old = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body;
      assert.equal(old.status, 'ready');
    } finally {
      second.stop();
      // Free plans broadcast one stream at a time: the next test needs this one idle.
      await waitFor('idle', async () => (await read(ls.id)).status === 'idle');
    }
  });

  it('refuses a second publisher on a live key, and a disabled stream', async () => {
    const ls = (await s.post('/v1/live-streams', { reconnect_window: 0 }).expect(201)).body;
    const url = `${s.rtmpBase}/${ls.stream_key}`;
    const first = pushRtmp(url, { seconds: 30 });
    try {
      await waitFor('active', async () => (await read(ls.id)).status === 'active');
      // The free plan's one broadcast at a time: another stream of the workspace is refused.
      const other = (await s.post('/v1/live-streams', {}).expect(201)).body;
      const over = pushRtmp(`${s.rtmpBase}/${other.stream_key}`, { seconds: 30 });
      const overCode = await Promise.race([over.done, new Promise((r) => setTimeout(() => r('still running'), 8000))]);
      over.stop();
      assert.notEqual(overCode, 'still running', 'a second broadcast went over the plan');
      const second = pushRtmp(url, { seconds: 30 });
      const code = await Promise.race([second.done, new Promise((r) => setTimeout(() => r('still running'), 8000))]);
      second.stop();
      assert.notEqual(code, 'still running');
      assert.equal((await read(ls.id)).status, 'active', 'the first publisher was hurt');
      await s.post(`/v1/live-streams/${ls.id}/disable`).expect(200);
      const code1 = await Promise.race([first.done, new Promise((r) => setTimeout(() => r('still running'), 8000))]);
      assert.notEqual(code1, 'still running', 'disable did not drop the encoder');
      await waitFor('idle', async () => (await read(ls.id)).status === 'idle');
      const third = pushRtmp(url, { seconds: 30 });
      const code3 = await Promise.race([third.done, new Promise((r) => setTimeout(() => r('still running'), 8000))]);
      third.stop();
      assert.notEqual(code3, 'still running', 'a disabled stream accepted an encoder');
    } finally {
      first.stop();
    }
  });

  it('a stream waiting in its reconnect window holds its plan slot: another stream goes active when the plan has room', async () => {
    const ws = await s.newWorkspace('starter');
    const mk = async (body: object, key: string) => (await s.post('/v1/live-streams', body, key).expect(201)).body;
    const readIn = async (id: string, key: string) => (await s.get(`/v1/live-streams/${id}`, key).expect(200)).body;
    // The two workspaces are independent: each half runs at the same time as the other.
    // Free plan (one broadcast): A drops and waits 60 s for its encoder; B is refused meanwhile.
    const freePlan = async () => {
      const a = await mk({ reconnect_window: 60 }, s.ws.fullKey);
      const b = await mk({ reconnect_window: 0 }, s.ws.fullKey);
      const first = pushRtmp(`${s.rtmpBase}/${a.stream_key}`, { seconds: 60 });
      try {
        await waitFor('a active', async () => (await readIn(a.id, s.ws.fullKey)).status === 'active');
      } finally {
        first.stop();
      }
      await first.done;
      await waitFor('a disconnected', async () => (await readIn(a.id, s.ws.fullKey)).status === 'disconnected');
      const refused = pushRtmp(`${s.rtmpBase}/${b.stream_key}`, { seconds: 30 });
      const code = await Promise.race([refused.done, new Promise((r) => setTimeout(() => r('still running'), 8000))]);
      refused.stop();
      assert.notEqual(code, 'still running', 'a free plan broadcast twice at once');
      await s.post(`/v1/live-streams/${a.id}/complete`).expect(200);
      await waitFor('a idle', async () => (await readIn(a.id, s.ws.fullKey)).status === 'idle');
    };

    // A plan with room: D goes active while C waits for its encoder.
    const roomyPlan = async () => {
      const c = await mk({ reconnect_window: 60 }, ws.fullKey);
      const d = await mk({ reconnect_window: 0 }, ws.fullKey);
      const third = pushRtmp(`${s.rtmpBase}/${c.stream_key}`, { seconds: 60 });
      try {
        await waitFor('c active', async () => (await readIn(c.id, ws.fullKey)).status === 'active');
      } finally {
        third.stop();
      }
      await third.done;
      await waitFor('c disconnected', async () => (await readIn(c.id, ws.fullKey)).status === 'disconnected');
      const other = pushRtmp(`${s.rtmpBase}/${d.stream_key}`, { seconds: 40 });
      try {
        await waitFor('d active while c waits for its encoder', async () => (await readIn(d.id, ws.fullKey)).status === 'active', 40_000);
        assert.equal((await readIn(c.id, ws.fullKey)).status, 'disconnected');
      } finally {
        other.stop();
        await s.post(`/v1/live-streams/${c.id}/complete`, undefined, ws.fullKey).expect(200);
        await waitFor('both idle', async () => (await readIn(c.id, ws.fullKey)).status === 'idle' && (await readIn(d.id, ws.fullKey)).status === 'idle');
      }
    };
    // Both halves end before the test does, whichever fails.
    const failed = (await Promise.allSettled([freePlan(), roomyPlan()])).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  });
});
