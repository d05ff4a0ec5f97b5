import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { runRollup } from '../../lib/analytics/rollup';
import { startStack, type Stack } from '../support/stack';

/**
 * Issue 49: "workspace totals said 706 views while Top videos listed three videos with one view
 * each" — the live streams' views were in the totals and in no list. The overview now lists the
 * top videos and the top live streams, and `others` holds the rest: they add up to the totals,
 * views and watch time, from raw events and from the rollup alike.
 */
describe('Viewer analytics: the workspace overview adds up (issue 49)', function () {
  this.timeout(120_000);
  let s: Stack;
  const sent = { views: 0, watchMs: 0 };

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ workers: [] });
    await s.db('analytics_rollup_state').delete();
  });
  after(() => s?.db('analytics_rollup_state').delete());

  /** `n` views of `subject`, each of `watchMs`, in one request each (the player's clock given). */
  async function views(subject: string, n: number, watchMs: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const base = { view_id: randomUUID(), subject, player: { name: 'test' } };
      const body = [
        { ...base, seq: 0, event: 'viewstart', position: 0, elapsed_ms: 0, watch_ms: 0 },
        { ...base, seq: 1, event: 'playing', position: 0, elapsed_ms: 300, watch_ms: 0 },
        { ...base, seq: 2, event: 'viewend', position: watchMs / 1000, elapsed_ms: 300 + watchMs, watch_ms: watchMs },
      ];
      const res = await fetch(`${s.url}/v1/beacons`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify(body) });
      assert.equal(res.status, 204);
      sent.views++;
      sent.watchMs += watchMs;
    }
  }

  it('lists the top videos and live streams, and the rest, adding up to the totals', async () => {
    // 12 videos (i + 1 views of 2 s each) and 2 public live streams (30 and 4 views of 7 s).
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { body } = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public', title: `clip ${i}` }).expect(201);
      ids.push(body.video_id);
      await views(body.video_id, i + 1, 2000);
    }
    const streams: string[] = [];
    for (const [title, n] of [['town hall', 30], ['launch', 4]] as const) {
      const { body } = await s.post('/v1/live-streams', { title, visibility: 'public' }).expect(201);
      streams.push(body.id);
      await views(body.id, n, 7000);
    }
    await s.app.hot.beacons.flush();

    const check = (o: Record<string, any>) => {
      assert.equal(o.totals.views, sent.views);
      assert.equal(o.totals.watch_time_seconds, sent.watchMs / 1000);
      assert.deepEqual(o.top_videos.map((v: { title: string; views: number }) => [v.title, v.views]), Array.from({ length: 10 }, (_, i) => [`clip ${11 - i}`, 12 - i]));
      assert.deepEqual(o.top_live_streams.map((v: { live_stream_id: string; title: string; views: number; watch_time_seconds: number }) => [v.live_stream_id, v.title, v.views, v.watch_time_seconds]), [
        [streams[0], 'town hall', 30, 210],
        [streams[1], 'launch', 4, 28],
      ]);
      assert.deepEqual(o.others, { videos: 2, live_streams: 0, views: 1 + 2, watch_time_seconds: 6 });
      const listed = [...o.top_videos, ...o.top_live_streams];
      assert.equal(listed.reduce((a: number, v: { views: number }) => a + v.views, 0) + o.others.views, o.totals.views);
      assert.equal(listed.reduce((a: number, v: { watch_time_seconds: number }) => a + v.watch_time_seconds, 0) + o.others.watch_time_seconds, o.totals.watch_time_seconds);
    };
    const raw = (await s.get('/v1/analytics?granularity=hour').expect(200)).body;
    assert.equal(raw.as_of, null, 'before the rollup: computed from raw events');
    check(raw);
    const run = await runRollup(s.db, { rawDays: 30, lookbackHours: 2 });
    for (const q of ['?granularity=hour', '?granularity=day']) {
      const rolled = (await s.get(`/v1/analytics${q}`).expect(200)).body;
      assert.equal(rolled.as_of, run.to, 'as of the rollup’s cut');
      check(rolled);
    }
  });
});
