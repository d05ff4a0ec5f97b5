import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { runRollup } from '../../lib/analytics/rollup';
import { signPlaybackToken } from '../../lib/playback/tokens';
import { parseVideoId } from '../../lib/ids';
import { ensureRollupSchedule, rollupScheduleId } from '../../lib/analytics/schedule';
import { spawnApi } from '../support/child';
import { freePort } from '../support/services';
import { startStack, type Stack } from '../support/stack';

type Ev = Record<string, unknown>;
const uuidOf = (id: string) => parseVideoId(id)!;

/** A complete view: startup 800 ms, one 1.5 s stall, 9 s watched, furthest position 10 s. */
function view(subject: string, viewId = randomUUID()): Ev[] {
  const player = { name: 'test', version: '1' };
  const base = { view_id: viewId, subject, player };
  return [
    { ...base, seq: 0, event: 'viewstart', position: 0, elapsed_ms: 0, watch_ms: 0 },
    { ...base, seq: 1, event: 'playing', position: 0, elapsed_ms: 800, watch_ms: 0, rendition: '240p', bitrate: 400000 },
    { ...base, seq: 2, event: 'rebufferstart', position: 2.2, elapsed_ms: 3000, watch_ms: 2200, rendition: '240p', bitrate: 400000 },
    { ...base, seq: 3, event: 'rebufferend', position: 2.2, elapsed_ms: 4500, watch_ms: 2200, rendition: '240p', bitrate: 400000 },
    { ...base, seq: 4, event: 'heartbeat', position: 8, elapsed_ms: 10300, watch_ms: 8000, rendition: '240p', bitrate: 400000 },
    { ...base, seq: 5, event: 'viewend', position: 10, elapsed_ms: 11300, watch_ms: 9000, rendition: '240p', bitrate: 400000 },
  ];
}

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('Viewer analytics: beacons and reads (SPEC §18)', function () {
  this.timeout(120_000);
  let s: Stack;
  let pub: string;
  let priv: string;

  const beacon = (body: unknown, type = 'text/plain') =>
    request(s.url).post('/v1/beacons').set('Content-Type', type).set('User-Agent', UA).send(typeof body === 'string' ? body : JSON.stringify(body));

  async function newVideo(visibility: string): Promise<string> {
    const { body } = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility }).expect(201);
    await s.db('videos').where({ id: uuidOf(body.video_id) }).update({ duration_seconds: 20 });
    return body.video_id;
  }

  const analytics = async (id: string, q = '') => (await s.get(`/v1/videos/${id}/analytics${q}`).expect(200)).body;
  const flush = () => s.app.hot.beacons.flush();

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ workers: ['workflow'], env: { ANALYTICS_FLUSH_MS: '60000' } });
    [pub, priv] = await Promise.all([newVideo('public'), newVideo('private')]);
    // Every stack of a run shares one database: start as if the rollup had never run.
    await s.db('analytics_rollup_state').delete();
  });

  it('answers the CORS preflight and sets no cookie', async () => {
    const pre = await request(s.url).options('/v1/beacons').set('Origin', 'https://site.example').set('Access-Control-Request-Method', 'POST').expect(204);
    assert.equal(pre.headers['access-control-allow-origin'], '*');
    assert.match(pre.headers['access-control-allow-methods'], /POST/);
    const res = await beacon(view(pub)[0]).set('Origin', 'https://site.example').expect(204);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['set-cookie'], undefined);
  });

  it('refuses malformed bodies with 400 and a stable code (CORS headers still set)', async () => {
    const bad = await beacon('{nope').expect(400);
    assert.equal(bad.body.error.code, 'invalid_json');
    assert.equal(bad.headers['access-control-allow-origin'], '*');
    assert.equal((await beacon({ seq: 0 }).expect(400)).body.error.code, 'invalid_beacon');
    assert.equal((await beacon([]).expect(400)).body.error.code, 'invalid_beacon');
    assert.equal((await beacon({ ...view(pub)[0], event: 'explode' }).expect(400)).body.error.code, 'invalid_beacon');
    assert.equal((await beacon({ ...view(pub)[0], view_id: 'x' }).expect(400)).body.error.code, 'invalid_beacon');
    const tiny = { view_id: randomUUID(), subject: 'v', event: 'pause', position: 0, player: { name: 'p' } };
    const many = Array.from({ length: 101 }, (_, i) => ({ ...tiny, seq: i }));
    assert.ok(JSON.stringify(many).length < 16 * 1024);
    assert.equal((await beacon(many).expect(400)).body.error.code, 'invalid_beacon');
    const huge = [{ ...view(pub)[0], subject: 'x'.repeat(2000) }];
    while (JSON.stringify(huge).length < 17_000) huge.push(huge[0]);
    assert.equal((await beacon(huge.slice(0, 100)).expect(413)).body.error.code, 'payload_too_large');
    // A body that does not say it is JSON or text: 415 (issue 49), with or without a type.
    assert.equal((await beacon(view(pub)[0], 'application/xml').expect(415)).body.error.code, 'unsupported_content_type');
    const untyped = await request(s.url).post('/v1/beacons').set('User-Agent', UA).send(Buffer.from(JSON.stringify(view(pub)[0]))).unset('Content-Type').expect(415);
    assert.equal(untyped.body.error.code, 'unsupported_content_type');
    assert.equal(untyped.headers['access-control-allow-origin'], '*');
    // Well-formed but not countable: unknown video, live stream not existing, garbage token → 204.
    await beacon({ ...view(pub)[0], subject: 'vid_00000000000000000000000000000000' }).expect(204);
    await beacon({ ...view(pub)[0], subject: 'ls_0123' }).expect(204);
    await beacon({ ...view(pub)[0], subject: 'a.b.c' }).expect(204);
  });

  it('counts a view once however often its beacons arrive (JSON and text/plain), with its metrics', async () => {
    const events = view(pub);
    await beacon(events).expect(204);
    await beacon(events, 'application/json').expect(204);
    await beacon(events.slice(2, 4)).expect(204);
    await flush();
    const a = await analytics(pub);
    assert.equal(a.totals.views, 2, 'this view and the one-event view of the CORS test'); // the CORS test sent a viewstart
    const { rows } = await s.db.raw(`select count(*)::int as n from analytics_events where view_id = ?`, [events[0].view_id as string]);
    assert.equal(rows[0].n, 6, 'duplicates dropped by (view_id, seq)');
    assert.equal(a.totals.watch_time_seconds, 9);
    assert.equal(a.totals.rebuffer_count, 1);
    assert.equal(a.totals.rebuffer_seconds, 1.5);
    assert.ok(a.totals.startup_time_p50_ms >= 700 && a.totals.startup_time_p50_ms <= 900, `startup ${a.totals.startup_time_p50_ms}`);
    assert.ok(a.totals.rebuffer_percentage > 14 && a.totals.rebuffer_percentage < 15, `rebuffer % ${a.totals.rebuffer_percentage}`);
    assert.equal(a.totals.average_bitrate, 400000);
    assert.equal(a.totals.unique_viewers, 1, 'same address and agent: one viewer');
    assert.equal(a.breakdowns.browser[0].value, 'Chrome');
    assert.equal(a.breakdowns.os[0].value, 'Linux');
    assert.equal(a.breakdowns.device[0].value, 'desktop');
    assert.deepEqual(a.breakdowns.rendition.map((r: { value: string }) => r.value), ['240p']);
    // Retention over 20 s: both views at 0 s, only the 10 s view at 50 %, none past it.
    assert.equal(a.retention.length, 101);
    assert.equal(a.retention[0].viewers, 2);
    assert.equal(a.retention[50].viewers, 1);
    assert.equal(a.retention[51].viewers, 0);
    assert.equal(a.series.reduce((n: number, p: { views: number }) => n + p.views, 0), 2);
  });

  it('stores no address and no user agent string', async () => {
    const { rows } = await s.db.raw(`select * from analytics_events`);
    const text = JSON.stringify(rows);
    assert.ok(!text.includes('127.0.0.1'));
    assert.ok(!text.includes('Mozilla'));
    assert.ok(rows.some((r: { viewer_hash: unknown }) => r.viewer_hash !== null));
  });

  it('counts a private video only with its playback token', async () => {
    await beacon(view(priv)).expect(204);
    await flush();
    assert.equal((await analytics(priv)).totals.views, 0);
    const { token } = await signPlaybackToken(s.config.playback, uuidOf(priv), 3600);
    await beacon(view(token)).expect(204);
    await flush();
    const a = await analytics(priv);
    assert.equal(a.totals.views, 1);
    assert.equal(a.totals.watch_time_seconds, 9);
  });

  it('validates ranges and keeps workspaces apart', async () => {
    assert.equal((await s.get(`/v1/videos/${pub}/analytics?from=2026-11-20T00:00:00Z&to=2026-11-19T00:00:00Z`).expect(400)).body.error.code, 'invalid_range');
    assert.equal((await s.get(`/v1/videos/${pub}/analytics?granularity=minute`).expect(400)).body.error.code, 'invalid_parameters');
    assert.equal((await s.get(`/v1/videos/${pub}/analytics?from=nope`).expect(400)).body.error.code, 'invalid_parameters');
    assert.equal(
      (await s.get(`/v1/videos/${pub}/analytics?from=2026-01-01T00:00:00Z&to=2026-11-01T00:00:00Z&granularity=hour`).expect(400)).body.error.code,
      'invalid_range',
    );
    const day = await analytics(pub, '?granularity=day');
    assert.equal(day.granularity, 'day');
    assert.equal(day.series.length, 8, 'seven days rounded out to whole days');
    const other = await s.newWorkspace();
    await s.get(`/v1/videos/${pub}/analytics`, other.fullKey).expect(404);
    assert.equal((await s.get('/v1/analytics', other.fullKey).expect(200)).body.totals.views, 0);
    const ws = (await s.get('/v1/analytics').expect(200)).body;
    assert.equal(ws.totals.views, 3);
    assert.equal(ws.top_videos[0].video_id, pub);
    assert.equal(ws.top_videos[0].views, 2);
    assert.equal(ws.totals.unique_viewers, 1, 'one person (same address and agent) across the workspace');
  });

  it('rolls up idempotently: the API answers the same from the rollup as from raw events', async () => {
    const before = await analytics(pub);
    const wsBefore = (await s.get('/v1/analytics').expect(200)).body;
    const o = { rawDays: 30, lookbackHours: 1 };
    const later = Date.now() + 3 * 3600_000; // every hour with events is final by then
    await runRollup(s.db, o, later);
    await runRollup(s.db, o, later);
    const { rows } = await s.db.raw(`select count(*)::int as n, sum(views)::int as views from analytics_hourly where subject_id = ?`, [uuidOf(pub)]);
    assert.ok(rows[0].n >= 1);
    assert.equal(rows[0].views, 2, 'a second run replaced the buckets instead of adding to them');
    const after = await analytics(pub, `?to=${new Date(later).toISOString()}&from=${before.from}`);
    assert.deepEqual(after.totals, before.totals);
    assert.deepEqual(after.retention, before.retention);
    assert.deepEqual(after.breakdowns, before.breakdowns);
    // The workspace overview reads the rollup alone once it has run.
    const wsAfter = (await s.get(`/v1/analytics?to=${new Date(later).toISOString()}&from=${wsBefore.from}`).expect(200)).body;
    assert.deepEqual(wsAfter.totals, wsBefore.totals);
    assert.deepEqual(wsAfter.top_videos, wsBefore.top_videos);
    const parts = await s.db.raw(`select count(*)::int as n from pg_inherits i join pg_class p on p.oid = i.inhparent where p.relname = 'analytics_events'`);
    assert.ok(parts.rows[0].n >= 9, 'partitions made ahead');
    await s.db.raw(`delete from analytics_rollup_state`);
  });

  it('creates the rollup Schedule idempotently and its workflow runs the rollup', async () => {
    const config = { ...s.config, analytics: { ...s.config.analytics, rollupEverySeconds: 3600 } } as typeof s.config;
    const id = await ensureRollupSchedule(s.temporal, config);
    assert.equal(await ensureRollupSchedule(s.temporal, config), id);
    const handle = s.temporal.schedule.getHandle(rollupScheduleId(s.config));
    try {
      const d = await handle.describe();
      assert.equal(d.action.type, 'startWorkflow');
      await handle.trigger();
      const deadline = Date.now() + 60_000;
      for (;;) {
        const { rows } = await s.db.raw(`select final_before from analytics_rollup_state`);
        if (rows.length) break;
        assert.ok(Date.now() < deadline, 'the scheduled rollup ran');
        await new Promise((r) => setTimeout(r, 300));
      }
    } finally {
      await handle.delete();
      // Leave the shared database as if the rollup had never run (the next file reads raw events).
      await s.db('analytics_rollup_state').delete();
    }
  });

  it('loses no accepted beacon when the API is stopped with SIGTERM', async function () {
    this.timeout(90_000);
    const port = await freePort();
    const api = await spawnApi({ ...s.env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, ANALYTICS_FLUSH_MS: '600000', ANALYTICS_FLUSH_ROWS: '5000' });
    const ids: string[] = [];
    try {
      for (let i = 0; i < 20; i++) {
        const events = view(pub);
        ids.push(events[0].view_id as string);
        const r = await fetch(`${api.url}/v1/beacons`, { method: 'POST', body: JSON.stringify(events), headers: { 'Content-Type': 'text/plain' } });
        assert.equal(r.status, 204);
      }
      const early = await s.db('analytics_events').whereIn('view_id', ids).count({ n: '*' });
      assert.equal(Number(early[0].n), 0, 'still buffered (a 10-minute flush interval)');
    } finally {
      await api.kill('SIGTERM');
    }
    const rows = await s.db('analytics_events').whereIn('view_id', ids).count({ n: '*' });
    assert.equal(Number(rows[0].n), 120);
  });
});
