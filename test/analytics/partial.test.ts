import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { runRollup } from '../../lib/analytics/rollup';
import { parseVideoId } from '../../lib/ids';
import { startStack, type Stack } from '../support/stack';

type Ev = Record<string, unknown>;

/** A view: startup `startup` ms, one 1.5 s stall, `watch` ms watched, furthest position `furthest` s. */
function view(subject: string, startup: number, watch: number, furthest: number): Ev[] {
  const base = { view_id: randomUUID(), subject, player: { name: 'test', version: '1' } };
  const r = { rendition: '240p', bitrate: 400000 };
  return [
    { ...base, seq: 0, event: 'viewstart', position: 0, elapsed_ms: 0, watch_ms: 0 },
    { ...base, seq: 1, event: 'playing', position: 0, elapsed_ms: startup, watch_ms: 0, ...r },
    { ...base, seq: 2, event: 'rebufferstart', position: 1, elapsed_ms: startup + 1000, watch_ms: 1000, ...r },
    { ...base, seq: 3, event: 'rebufferend', position: 1, elapsed_ms: startup + 2500, watch_ms: 1000, ...r },
    { ...base, seq: 4, event: 'viewend', position: furthest, elapsed_ms: startup + 2500 + watch, watch_ms: watch, ...r },
  ];
}

const agent = (n: number) => `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/13${n}.0.0.0 Safari/537.36`;

describe('Viewer analytics: reads from the rollup’s rows, its current hour partial, as of its last run (issues 24, 36)', function () {
  this.timeout(120_000);
  let s: Stack;
  let vid: string;

  const beacon = (events: Ev[], ua: string) => request(s.url).post('/v1/beacons').set('Content-Type', 'text/plain').set('User-Agent', ua).send(JSON.stringify(events)).expect(204);
  const analytics = async (q = '?granularity=hour') => (await s.get(`/v1/videos/${vid}/analytics${q}`).expect(200)).body;

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ workers: [], env: { ANALYTICS_FLUSH_MS: '60000' } });
    const { body } = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public' }).expect(201);
    vid = body.video_id;
    await s.db('videos').where({ id: parseVideoId(vid)! }).update({ duration_seconds: 20 });
    await s.db('analytics_rollup_state').delete();
  });

  after(async () => {
    await s?.db('analytics_rollup_state').delete();
  });

  it('reads the rollup alone once it has run: as of its cut, then the next run adds the views since, new viewers included, exactly as raw events answer', async () => {
    // Before the run: two viewers.
    await beacon(view(vid, 300, 9000, 10), agent(1));
    await beacon(view(vid, 2200, 4000, 5), agent(2));
    await s.app.hot.beacons.flush();
    const run = await runRollup(s.db, { rawDays: 30, lookbackHours: 2 });
    const { rows: state } = await s.db.raw(`select partial_before from analytics_rollup_state`);
    assert.equal(new Date(state[0].partial_before).toISOString(), run.to, 'the run records its cut');
    const { rows: partial } = await s.db.raw(`select sum(views)::int as views from analytics_hourly where subject_id = ?`, [parseVideoId(vid)]);
    assert.equal(partial[0].views, 2, 'the run wrote the current, partial hour');

    // After the run: viewer 1 again (not new today) and a third viewer (new). The read is as of
    // the run's cut (issue 36: a read is a few indexed lookups on rollup rows, never raw events).
    await beacon(view(vid, 700, 15000, 20), agent(1));
    await beacon(view(vid, 5000, 1000, 2), agent(3));
    await s.app.hot.beacons.flush();
    const asOfCut = await analytics();
    assert.equal(asOfCut.totals.views, 2, 'views started since the cut wait for the next run');
    assert.equal(asOfCut.totals.unique_viewers, 2);

    // The next run adds them: a viewer first seen after the first cut is new; one seen before it is not.
    await runRollup(s.db, { rawDays: 30, lookbackHours: 2 });
    const mixed = await analytics();
    assert.equal(mixed.totals.views, 4);
    assert.equal(mixed.totals.unique_viewers, 3);

    // A range of whole days takes today from the daily rows (the run summed its hours into them).
    const DAY = 86400_000;
    const today = Math.floor(Date.now() / DAY) * DAY;
    const days = `?granularity=day&from=${new Date(today - DAY).toISOString()}&to=${new Date(today + 2 * DAY).toISOString()}`;
    const { rows: daily } = await s.db.raw(`select views from analytics_daily where subject_id = ? and hour = ?`, [parseVideoId(vid), new Date(today).toISOString()]);
    assert.equal(daily[0]?.views, 4, 'the run wrote the day');
    const byDay = await analytics(days);
    assert.equal(byDay.totals.views, 4);

    // The same answer from raw events alone (as before the rollup ever ran): totals, series,
    // retention and breakdowns summed by Postgres over the rollup's rows equal raw events'.
    await s.db('analytics_rollup_state').delete();
    const rawByDay = await analytics(days);
    assert.deepEqual(byDay.totals, rawByDay.totals);
    assert.deepEqual(byDay.series, rawByDay.series);
    assert.deepEqual(byDay.retention, rawByDay.retention);
    assert.deepEqual(byDay.breakdowns, rawByDay.breakdowns);
    const raw = await analytics();
    assert.deepEqual(mixed.totals, raw.totals);
    assert.deepEqual(mixed.series, raw.series);
    assert.deepEqual(mixed.retention, raw.retention);
    assert.deepEqual(mixed.breakdowns, raw.breakdowns);

    // The views started before the cut come from the aggregates: the read does not recompute them.
    await runRollup(s.db, { rawDays: 30, lookbackHours: 2 });
    const id = parseVideoId(vid);
    await s.db.raw(`update analytics_hourly set views = views + 100 where subject_id = ? and hour = (select max(hour) from analytics_hourly where subject_id = ?)`, [id, id]);
    assert.equal((await analytics()).totals.views, 104);
    await runRollup(s.db, { rawDays: 30, lookbackHours: 2 });
    assert.equal((await analytics()).totals.views, 4, 'the next run recomputes the hour');
  });

  it('two runs at once (the schedule’s and an operator’s) both finish, and count every view once', async () => {
    const runs = await Promise.allSettled([1, 2, 3].map(() => runRollup(s.db, { rawDays: 30, lookbackHours: 2 })));
    for (const r of runs) assert.equal(r.status, 'fulfilled', r.status === 'rejected' ? String(r.reason) : '');
    assert.equal((await analytics()).totals.views, 4);
  });
});
