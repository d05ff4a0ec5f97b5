import assert from 'node:assert/strict';
import { type LiveStack, pushRtmp, startLiveStack, waitFor } from './helpers';

describe("live: the plan's concurrent broadcasts (issue 33 row 4)", function () {
  this.timeout(180_000);
  let s: LiveStack;
  before(async () => {
    s = await startLiveStack();
  });
  after(() => s?.close());

  it('admits exactly one of three encoders started at once on a Free workspace, and the next once it ends', async () => {
    const streams = await Promise.all([1, 2, 3].map(async (i) => (await s.post('/v1/live-streams', { title: `race ${i}`, reconnect_window: 0 }).expect(201)).body));
    const pushers = streams.map((ls) => pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 60 }));
    try {
      // Refused encoders are dropped as they publish: two exit, and the third is the one admitted.
      const exited: Array<number | null | undefined> = [undefined, undefined, undefined];
      pushers.forEach((p, i) => void p.done.then((c) => (exited[i] = c)));
      await waitFor('two encoders refused', async () => exited.filter((c) => c !== undefined).length >= 2, 15_000, 100).catch(() => undefined);
      const stillPushing = () => exited.filter((c) => c === undefined).length;
      assert.equal(stillPushing(), 1, `encoders still pushing: ${stillPushing()} (exit codes ${JSON.stringify(exited)})`);
      const winner = streams[exited.indexOf(undefined)];
      await waitFor('the admitted stream active', async () => (await s.get(`/v1/live-streams/${winner.id}`).expect(200)).body.status === 'active', 60_000);
      // Once it is on air, the other two are still out and it still pushes.
      assert.equal(stillPushing(), 1, `encoders still pushing once one is active: ${stillPushing()} (exit codes ${JSON.stringify(exited)})`);
      assert.equal(exited[streams.indexOf(winner)], undefined, 'the admitted encoder was dropped');
      for (const ls of streams) {
        const r = (await s.get(`/v1/live-streams/${ls.id}`).expect(200)).body;
        if (ls.id === winner.id) continue;
        assert.equal(r.status, 'idle', `${ls.id} broadcasts too`);
        assert.equal(r.active_video_id, null, `${ls.id} has a recording of its own`);
      }
      const recordings = await s.db('videos').where({ workspace_id: s.ws.id }).whereNotNull('live_stream_id').count('* as n').first();
      assert.equal(Number(recordings?.n), 1, 'more than one broadcast was recorded');

      // The reservation is released when the broadcast ends: another stream may go live.
      await s.post(`/v1/live-streams/${winner.id}/complete`).expect(200);
      await waitFor('the first broadcast idle', async () => (await s.get(`/v1/live-streams/${winner.id}`).expect(200)).body.status === 'idle', 30_000);
      const next = streams.find((ls) => ls.id !== winner.id)!;
      const again = pushRtmp(`${s.rtmpBase}/${next.stream_key}`, { seconds: 40 });
      pushers.push(again);
      await waitFor('the next stream active', async () => (await s.get(`/v1/live-streams/${next.id}`).expect(200)).body.status === 'active', 60_000);
    } finally {
      for (const p of pushers) p.stop();
    }
  });
});
