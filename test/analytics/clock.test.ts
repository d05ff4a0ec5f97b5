import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { parseVideoId } from '../../lib/ids';
import { startStack, type Stack } from '../support/stack';

type Ev = Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * SPEC §18: `elapsed_ms` and `watch_ms` are optional. A sender that gives only positions (issue 36
 * item 3) gets its watch time from the playhead and its startup from the events' order.
 */
describe('Viewer analytics: senders without the player clock (SPEC-only beacons)', function () {
  this.timeout(120_000);
  let s: Stack;

  const beacon = (body: unknown) => request(s.url).post('/v1/beacons').set('Content-Type', 'text/plain').send(JSON.stringify(body));
  const analytics = async (id: string) => (await s.get(`/v1/videos/${id}/analytics`).expect(200)).body;

  async function newVideo(): Promise<string> {
    const { body } = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public' }).expect(201);
    await s.db('videos').where({ id: parseVideoId(body.video_id)! }).update({ duration_seconds: 600 });
    return body.video_id;
  }

  /** A sender following SPEC §18 alone: no elapsed_ms, no watch_ms. */
  function sender(subject: string) {
    const view_id = randomUUID();
    let seq = 0;
    return (event: string, position: number): Ev => ({ view_id, seq: seq++, subject, event, position, player: { name: 'spec-only' } });
  }

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ workers: [] });
    await s.db('analytics_rollup_state').delete();
  });

  // Ten seconds of the server's clock, in two 5 s intervals (it was 20 s: the same checks, 10 s less waiting).
  it('counts a 10-second view as about 10 s, never across a seek, never faster than time passes', async function () {
    this.timeout(90_000);
    const [plain, seeking, forged] = await Promise.all([newVideo(), newVideo(), newVideo()]);
    const a = sender(plain);
    const b = sender(seeking);
    const c = sender(forged);
    // t = 0: play intent; the first frame half a second later, in its own request.
    await Promise.all([beacon([a('viewstart', 0)]), beacon([b('viewstart', 0)]), beacon([c('viewstart', 0)])]);
    await sleep(500);
    await Promise.all([beacon([a('playing', 0)]), beacon([b('playing', 0)]), beacon([c('playing', 0)])]);
    await sleep(4_500);
    // t = 5 s: a heartbeat each; b seeks to 300 s; c claims a 500 s jump in 5 s without a seek.
    await Promise.all([
      beacon([a('heartbeat', 5)]),
      beacon([b('heartbeat', 5), b('seeked', 300), b('playing', 300)]),
      beacon([c('heartbeat', 500)]),
    ]);
    await sleep(5_000);
    // t = 10 s: paused and left.
    await Promise.all([beacon([a('pause', 10), a('viewend', 10)]), beacon([b('pause', 305), b('viewend', 305)]), beacon([c('viewend', 505)])]);
    await s.app.hot.beacons.flush();

    const [ra, rb, rc] = await Promise.all([analytics(plain), analytics(seeking), analytics(forged)]);
    assert.equal(ra.totals.views, 1);
    assert.ok(Math.abs(ra.totals.watch_time_seconds - 10) <= 0.5, `a 10-second view counts ~10 s (${ra.totals.watch_time_seconds})`);
    assert.ok(Math.abs(rb.totals.watch_time_seconds - 10) <= 0.5, `the seek is not watch time (${rb.totals.watch_time_seconds})`);
    // c: the 500 s jump is bounded by the ~5 s that passed (+2 s slack), then 5 s more.
    assert.ok(rc.totals.watch_time_seconds >= 9 && rc.totals.watch_time_seconds <= 13, `bounded by wall time (${rc.totals.watch_time_seconds})`);
    // Startup from the events' order: viewstart, then playing ~0.5 s later on the server's clock.
    assert.ok(ra.totals.startup_time_p50_ms >= 300 && ra.totals.startup_time_p50_ms <= 2000, `startup ${ra.totals.startup_time_p50_ms}`);
    assert.equal(ra.totals.exits_before_start, 0);
    assert.equal(ra.retention[0].viewers, 1);
  });

  it('counts a start without a first frame as an exit before start, with no startup time', async () => {
    const id = await newVideo();
    const a = sender(id);
    await beacon([a('viewstart', 0), a('viewend', 0)]).expect(204);
    await s.app.hot.beacons.flush();
    const r = await analytics(id);
    assert.equal(r.totals.views, 1);
    assert.equal(r.totals.exits_before_start, 1);
    assert.equal(r.totals.watch_time_seconds, 0);
    assert.equal(r.totals.startup_time_p50_ms, null);
  });

  it('validates the player clock: watch_ms never exceeds elapsed_ms', async () => {
    const e = { view_id: randomUUID(), seq: 0, subject: 'vid_x', event: 'heartbeat', position: 1, player: { name: 'p' } };
    const res = await beacon({ ...e, elapsed_ms: 1000, watch_ms: 60_000 }).expect(400);
    assert.equal(res.body.error.code, 'invalid_beacon');
    assert.match(JSON.stringify(res.body.error.details), /watch_ms cannot exceed elapsed_ms/);
    await beacon({ ...e, elapsed_ms: 1000, watch_ms: 1000 }).expect(204);
    await beacon({ ...e, elapsed_ms: -1 }).expect(400);
    await beacon({ ...e, watch_ms: 1.5 }).expect(400);
  });
});
