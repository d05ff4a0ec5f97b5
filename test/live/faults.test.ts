import assert from 'node:assert/strict';
import { type Proc, spawnWorker } from '../support/child';
import { liveWorkflowId } from '../../workflows/live/defs';
import { type LiveStack, pushRtmp, startLiveStack, waitFor, waitLive } from './helpers';

/** Pollers of the live task queue's activities: a spawned worker is ready once it is one. */
async function livePollers(s: LiveStack): Promise<number> {
  const r = await s.temporal.workflowService.describeTaskQueue({ namespace: s.config.temporal.namespace, taskQueue: { name: s.config.live.queue }, taskQueueType: 2 });
  return r.pollers?.length ?? 0;
}

describe('live: faults mid-broadcast', function () {
  this.timeout(180_000);
  let s: LiveStack;
  /** Two live workers (no live worker in this process): the first test SIGKILLs the one running its session. */
  let workers: Proc[] = [];
  before(async () => {
    s = await startLiveStack({ workers: ['workflow', 'transcode'] });
    workers = [spawnWorker(s.env, 'live'), spawnWorker(s.env, 'live')];
    await waitFor('both live workers polling', async () => (await livePollers(s)) >= 2, 60_000);
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.kill('SIGKILL')));
    await s?.close();
  });

  it('a live worker SIGKILLed mid-broadcast is replaced within seconds; the recording shows a discontinuity', async () => {
    const ls = (await s.post('/v1/live-streams', { reconnect_window: 30 }).expect(201)).body;
    const push = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 90 });
    try {
      const active = await waitLive(s, ls.id);
      // The worker whose identity (pid@host) holds the session; the other one is its replacement.
      const running = await waitFor('the worker running the session', async () => {
        const d = await s.temporal.workflow.getHandle(liveWorkflowId(ls.id)).describe();
        const who = d.raw.pendingActivities?.find((a) => a.activityType?.name === 'runLiveSession')?.lastWorkerIdentity;
        return workers.find((w) => who?.startsWith(`${w.child.pid}@`));
      });
      const video = (await s.db('videos').where({ live_stream_id: ls.id }).first('id')).id;
      const killedAt = Date.now();
      await running.kill('SIGKILL');
      await waitFor('segments from the new attempt', async () => s.db('live_segments').where({ video_id: video, discontinuity: true }).first(), 30_000, 100);
      const replacedIn = Date.now() - killedAt;
      if (process.env.LIVE_FIGURES) console.log('replaced in', replacedIn, 'ms');
      // SPEC §22 says 10 s; alone this takes 5–8 s (docs/live.md). Under CI's three shards on two
      // cores it has taken 10.8 s, so the test's bound is twice that: it still fails if the kill is
      // noticed only by a long timeout (the start-to-close, or a heartbeat of tens of seconds).
      assert.ok(replacedIn < 20_000, `the session resumed ${replacedIn} ms after the kill`);
      await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
      const ready = await waitFor('ready', async () => {
        const v = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body;
        return (v.status === 'ready' || v.status === 'failed') && v;
      }, 30_000);
      assert.equal(ready.status, 'ready');
      const media = await (await fetch(ready.hls_url.replace('master.m3u8', 'source/index.m3u8'))).text();
      assert.match(media, /#EXT-X-DISCONTINUITY\n/);
    } finally {
      push.stop();
    }
  });

  it('a media server restart mid-broadcast: the encoder reconnects into the same recording', async () => {
    // A live worker left by the test before (or either when this one runs alone).
    await waitFor('a live worker polling', async () => (await livePollers(s)) >= 1, 60_000);
    const ls = (await s.post('/v1/live-streams', { reconnect_window: 30 }).expect(201)).body;
    const url = `${s.rtmpBase}/${ls.stream_key}`;
    const first = pushRtmp(url, { seconds: 60 });
    let second: ReturnType<typeof pushRtmp> | undefined;
    try {
      const active = await waitLive(s, ls.id);
      await s.ingest.stop();
      await first.done;
      await s.restartIngest();
      await waitFor('disconnected', async () => (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body.status === 'disconnected', 30_000);
      // OBS reconnects on its own; ffmpeg does not, so the test does it.
      second = pushRtmp(url, { seconds: 60 });
      const again = await waitFor('active again', async () => {
        const r = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
        return r.status === 'active' && r;
      }, 60_000);
      assert.equal(again.active_video_id, active.active_video_id);
      await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
      await waitFor('ready', async () => (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body.status === 'ready', 30_000);
    } finally {
      first.stop();
      second?.stop();
    }
  });
});
