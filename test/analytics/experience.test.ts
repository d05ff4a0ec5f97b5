import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { runRollup } from '../../lib/analytics/rollup';
import { parseVideoId } from '../../lib/ids';
import { startStack, type Stack } from '../support/stack';

type Ev = Record<string, unknown>;

/** Issue 36 items 4 and 6: experience per view and in totals, and geography, as the API (and the client, the dashboard) read them. */
describe('Viewer analytics: experience scores and countries', function () {
  this.timeout(120_000);
  let s: Stack;
  let id: string;

  const beacon = (body: unknown) => request(s.url).post('/v1/beacons').set('Content-Type', 'text/plain').send(JSON.stringify(body)).expect(204);

  /** A view as the SDK sends it: [event, elapsed_ms, watch_ms, position, extra]. */
  function view(steps: Array<[string, number, number, number, Ev?]>): Ev[] {
    const view_id = randomUUID();
    return steps.map(([event, elapsed_ms, watch_ms, position, extra], seq) => ({ view_id, seq, subject: id, event, elapsed_ms, watch_ms, position, player: { name: 'test' }, ...extra }));
  }
  const hd = { rendition: '720p', bitrate: 2_500_000, player_height: 720 };
  const low = { rendition: '240p', bitrate: 400_000, player_height: 720 };

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ workers: [], env: { TRUSTED_PROXIES: '127.0.0.1/32' } });
    await s.db('analytics_rollup_state').delete();
    const { body } = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public' }).expect(201);
    id = body.video_id;
    await s.db('videos').where({ id: parseVideoId(id)! }).update({ duration_seconds: 600 });
  });

  it('tells startup failures, playback failures and exits before start apart, and scores each view', async () => {
    await beacon([
      // Good: 800 ms startup, 20 s at 720p in a 720-pixel player.
      ...view([['viewstart', 0, 0, 0], ['playing', 800, 0, 0, hd], ['heartbeat', 10_800, 10_000, 10, hd], ['viewend', 20_800, 20_000, 20, hd]]),
      // Forced low rendition: 240p shown 720 pixels high (200 % upscaled) for 20 s.
      ...view([['viewstart', 0, 0, 0], ['playing', 800, 0, 0, low], ['heartbeat', 10_800, 10_000, 10, low], ['viewend', 20_800, 20_000, 20, low]]),
      // A stream that fails to start: an error and never a first frame.
      ...view([['viewstart', 0, 0, 0], ['error', 3000, 0, 0, { error_code: 'hls_manifestLoadError' }], ['viewend', 3100, 0, 0]]),
      // An exit before start: the viewer left before the first frame, no error.
      ...view([['viewstart', 0, 0, 0], ['viewend', 2000, 0, 0]]),
      // A playback failure after 5.5 s at 720p.
      ...view([['viewstart', 0, 0, 0], ['playing', 500, 0, 0, hd], ['heartbeat', 5500, 5000, 5, hd], ['error', 6000, 5500, 5.5, { ...hd, error_code: 'media_3' }]]),
    ]);
    await s.app.hot.beacons.flush();
    const t = (await s.get(`/v1/videos/${id}/analytics`).expect(200)).body.totals;
    assert.equal(t.views, 5);
    assert.equal(t.startup_failures, 1);
    assert.equal(t.exits_before_start, 1, 'the exit without an error is not a failure');
    assert.equal(t.playback_failures, 1);
    assert.equal(t.error_rate, 0.4);
    // Scores: good (startup 0.963, smooth 1, quality 1) 98.8; low (quality e^-0.66 = 0.517) 82.7;
    // the two failures 0; the exit before start has none → (98.8 + 82.7) / 4.
    assert.ok(Math.abs(t.viewer_experience_score - 45.4) <= 0.2, `score ${t.viewer_experience_score}`);
    // 2.5 Mb/s for 20 s + 0.4 Mb/s for 20 s + 2.5 Mb/s for 5.5 s.
    assert.ok(Math.abs(t.time_weighted_bitrate_kbps - 1576.9) <= 0.5, `bitrate ${t.time_weighted_bitrate_kbps}`);
    // Upscaled for 20 of 45.5 s with heights known: a share of time, 0–100 % (issue 49); the
    // amount, 200 % for those 20 s, is its own figure.
    assert.ok(Math.abs(t.upscale_percentage - (100 * 20) / 45.5) <= 0.05, `upscale ${t.upscale_percentage}`);
    assert.ok(Math.abs(t.upscale_amount_percentage - 87.91) <= 0.05, `upscale amount ${t.upscale_amount_percentage}`);
    assert.equal(t.downscale_percentage, 0);
    assert.equal(t.rebuffer_frequency_per_minute, 0);
    assert.equal(t.average_bitrate !== null, true);
  });

  it('counts rebuffer frequency per minute of playback and downscaling', async () => {
    const before = (await s.get(`/v1/videos/${id}/analytics`).expect(200)).body.totals;
    const big = { rendition: '1080p', bitrate: 5_000_000, player_height: 540 };
    await beacon(
      view([
        ['viewstart', 0, 0, 0],
        ['playing', 400, 0, 0, big],
        ['rebufferstart', 30_400, 30_000, 30, big],
        ['rebufferend', 31_400, 30_000, 30, big],
        ['rebufferstart', 61_400, 60_000, 60, big],
        ['rebufferend', 62_400, 60_000, 60, big],
        ['viewend', 62_500, 60_100, 60.1, big],
      ]),
    );
    await s.app.hot.beacons.flush();
    const t = (await s.get(`/v1/videos/${id}/analytics`).expect(200)).body.totals;
    assert.equal(t.rebuffer_count - before.rebuffer_count, 2);
    // 2 stalls over (20 + 20 + 5.5 + 60.1) s of playback.
    assert.ok(Math.abs(t.rebuffer_frequency_per_minute - 2 / (105.6 / 60)) <= 0.01, `frequency ${t.rebuffer_frequency_per_minute}`);
    // 1080p shown at 540: downscaled for 60.1 of 105.6 s, by 50 %.
    assert.ok(Math.abs(t.downscale_percentage - (100 * 60.1) / 105.6) <= 0.05, `downscale ${t.downscale_percentage}`);
    assert.ok(Math.abs(t.downscale_amount_percentage - (100 * 0.5 * 60.1) / 105.6) <= 0.05, `downscale amount ${t.downscale_amount_percentage}`);
  });

  it('stores the experience figures in the rollup: the same totals from the hourly buckets as from raw events', async () => {
    const raw = (await s.get(`/v1/videos/${id}/analytics`).expect(200)).body;
    const later = Date.now() + 3 * 3600_000;
    try {
      await runRollup(s.db, { rawDays: 30, lookbackHours: 1 }, later);
      const rolled = (await s.get(`/v1/videos/${id}/analytics?from=${raw.from}&to=${new Date(later).toISOString()}`).expect(200)).body;
      assert.deepEqual(rolled.totals, raw.totals);
    } finally {
      await s.db('analytics_rollup_state').delete();
    }
  });

  it('breaks views down by country resolved at ingest (through TRUSTED_PROXIES), storing no address', async () => {
    const { body } = await s.post('/v1/upload/init', { filename: 'b.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public' }).expect(201);
    const vid = body.video_id;
    // Public addresses whose country is well known; a private one and an IPv6 one have none.
    const from = ['8.8.8.8', '8.8.4.4', '81.2.69.142', '193.0.6.139', '10.1.2.3', '2001:4860:4860::8888'];
    for (const address of from) {
      const e = { view_id: randomUUID(), seq: 0, subject: vid, event: 'viewstart', position: 0, player: { name: 'test' } };
      await request(s.url).post('/v1/beacons').set('Content-Type', 'text/plain').set('X-Forwarded-For', address).send(JSON.stringify([e, { ...e, seq: 1, event: 'viewend' }])).expect(204);
    }
    await s.app.hot.beacons.flush();
    const a = (await s.get(`/v1/videos/${vid}/analytics`).expect(200)).body;
    const country = Object.fromEntries(a.breakdowns.country.map((e: { value: string; views: number }) => [e.value, e.views]));
    assert.deepEqual(country, { US: 2, GB: 1, NL: 1, Unknown: 2 });
    const { rows } = await s.db.raw(`select * from analytics_events where subject_id = ?`, [parseVideoId(vid)!]);
    const stored = JSON.stringify(rows);
    for (const address of from) assert.ok(!stored.includes(address), `${address} not stored`);
    assert.deepEqual(rows.filter((r: { event: string }) => r.event === 'viewend').map((r: { country: string | null }) => r.country), Array(6).fill(null), 'only the start carries the country');
  });
});
