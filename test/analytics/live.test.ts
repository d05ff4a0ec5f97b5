import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { CONCURRENT_WINDOW_SECONDS } from '../../lib/analytics/live';
import { parseVideoId } from '../../lib/ids';
import { startStack, type Stack } from '../support/stack';

type Ev = Record<string, unknown>;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const LIMIT = 40;
// This file's viewers come from an address of their own (through a trusted proxy): the limiter's
// counters live in the test database that every stack of the run shares.
const VIEWER = `198.51.100.${1 + Math.floor(Math.random() * 250)}`;

/** What the embed player sends for a live view: intent, first frame after 600 ms, heartbeats every 10 s (`ended` adds a viewend). */
function liveView(subject: string, heartbeats: number, ended = false): Ev[] {
  const base = { view_id: randomUUID(), subject, player: { name: 'vidhost', version: '1' }, rendition: '720p', bitrate: 2_000_000 };
  const events: Ev[] = [
    { ...base, seq: 0, event: 'viewstart', position: 0, elapsed_ms: 0, watch_ms: 0 },
    { ...base, seq: 1, event: 'playing', position: 0, elapsed_ms: 600, watch_ms: 0 },
  ];
  for (let i = 1; i <= heartbeats; i++) events.push({ ...base, seq: 1 + i, event: 'heartbeat', position: i * 10, elapsed_ms: 600 + i * 10_000, watch_ms: i * 10_000 });
  if (ended) events.push({ ...base, seq: events.length, event: 'viewend', position: heartbeats * 10 + 1, elapsed_ms: 1600 + heartbeats * 10_000, watch_ms: heartbeats * 10_000 + 1000 });
  return events;
}

describe('Viewer analytics: live streams and the per-address beacon limit (SPEC §18)', function () {
  this.timeout(120_000);
  let s: Stack;
  let ls: string;

  const beacon = (body: unknown) => request(s.url).post('/v1/beacons').set('Content-Type', 'text/plain').set('User-Agent', UA).set('X-Forwarded-For', VIEWER).send(JSON.stringify(body));
  const flush = () => s.app.hot.beacons.flush();

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ workers: [], env: { ANALYTICS_FLUSH_MS: '60000', ANALYTICS_BEACONS_PER_MINUTE: String(LIMIT), TRUSTED_PROXIES: '127.0.0.1/32' } });
    ls = (await s.post('/v1/live-streams', { title: 'show', visibility: 'public' }).expect(201)).body.id;
    // Every stack of a run shares one database: start as if the rollup had never run, so the
    // workspace overview reads raw events.
    await s.db('analytics_rollup_state').delete();
  });

  after(() => s?.close());

  it('counts a live stream\'s viewers: concurrent now, views and watch time over the range', async () => {
    // Two watching (one of them reported twice: duplicates count once), one who left.
    const a = liveView(ls, 3);
    await beacon(a).expect(204);
    await beacon(a.slice(1)).expect(204);
    await beacon(liveView(ls, 1)).expect(204);
    await beacon(liveView(ls, 2, true)).expect(204);
    await flush();
    // A view whose last event is older than the window (written as the buffer would have, long ago).
    const stale = new Date(Date.now() - (CONCURRENT_WINDOW_SECONDS + 5) * 1000);
    await s.db('analytics_events').insert({ day: stale.toISOString().slice(0, 10), received_at: stale.toISOString(), view_id: randomUUID(), seq: 0, subject_id: ls, event: 'heartbeat', position: 0 });

    const body = (await s.get(`/v1/live-streams/${ls}/analytics`).expect(200)).body;
    assert.equal(body.live_stream_id, ls);
    assert.equal(body.concurrent_window_seconds, CONCURRENT_WINDOW_SECONDS);
    assert.equal(body.concurrent_viewers, 2, 'the view that ended and the silent one are not concurrent');
    assert.equal(body.totals.views, 3);
    assert.equal(body.totals.watch_time_seconds, 30 + 10 + 21);
    assert.equal(body.totals.startup_time_p50_ms > 500 && body.totals.startup_time_p50_ms < 700, true, `startup ${body.totals.startup_time_p50_ms}`);
    assert.equal(body.breakdowns.rendition[0].value, '720p');
    assert.equal(body.series.reduce((n: number, p: { views: number }) => n + p.views, 0), 3);
    assert.equal('retention' in body, false, 'a live stream has no duration to retain over');
    // The workspace's totals include the stream; its top videos list only videos.
    const ws = (await s.get('/v1/analytics').expect(200)).body;
    assert.equal(ws.totals.views, 3);
    assert.deepEqual(ws.top_videos, []);
  });

  it('counts nothing for a private, deleted or unknown live stream', async () => {
    const priv = (await s.post('/v1/live-streams', { visibility: 'private' }).expect(201)).body.id;
    await beacon(liveView(priv, 1)).expect(204);
    await beacon(liveView('ls_00000000000000000000000000000000', 1)).expect(204);
    await flush();
    const body = (await s.get(`/v1/live-streams/${priv}/analytics`).expect(200)).body;
    assert.equal(body.totals.views, 0);
    assert.equal(body.concurrent_viewers, 0);
    const { rows } = await s.db.raw(`select count(*)::int as n from analytics_events where subject_id in (?, 'ls_00000000000000000000000000000000')`, [priv]);
    assert.equal(rows[0].n, 0);
  });

  it('answers 404 for another workspace\'s or an unknown stream and 400 for a bad range', async () => {
    const other = await s.newWorkspace();
    assert.equal((await s.get(`/v1/live-streams/${ls}/analytics`, other.fullKey).expect(404)).body.error.code, 'not_found');
    await s.get('/v1/live-streams/ls_nope/analytics').expect(404);
    const bad = await s.get(`/v1/live-streams/${ls}/analytics?from=2026-11-25T00:00:00Z&to=2026-11-24T00:00:00Z`).expect(400);
    assert.equal(bad.body.error.code, 'invalid_range');
  });

  it('names the live stream as the beacon subject on the live embed page', async () => {
    // On air: the state the live workflow sets when media is playable (a broadcast needs ffmpeg and minutes; test/live covers it).
    const { body } = await s.post('/v1/upload/init', { filename: 'rec.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public' }).expect(201);
    await s.db('live_streams').where({ id: ls }).update({ status: 'active', active_video_id: parseVideoId(body.video_id) });
    try {
      const page = await fetch(`${s.config.playerUrl}/embed/${ls}`);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, new RegExp(`data-subject="${ls}"`));
      assert.match(html, /data-beacons="[^"]+\/v1\/beacons"/);
    } finally {
      await s.db('live_streams').where({ id: ls }).update({ status: 'idle', active_video_id: null });
    }
  });

  it(`limits beacon requests per client address (${LIMIT} a minute here): 429 beacon_rate_limited, nothing stored`, async () => {
    // A minute's window may end mid-test: two windows admit at most 2 × LIMIT.
    let refused: request.Response | undefined;
    for (let i = 0; i < 2 * LIMIT + 1 && !refused; i++) {
      const res = await beacon(liveView(ls, 0).slice(0, 1));
      if (res.status === 429) refused = res;
      else assert.equal(res.status, 204);
    }
    assert.ok(refused, 'a 429 came');
    assert.equal(refused.body.error.code, 'beacon_rate_limited');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal(refused.headers['access-control-allow-origin'], '*', 'the sender can read it');
    const sent = liveView(ls, 0).slice(0, 1);
    const again = await beacon(sent);
    if (again.status === 429) {
      await flush();
      const { rows } = await s.db.raw(`select count(*)::int as n from analytics_events where view_id = ?`, [sent[0].view_id as string]);
      assert.equal(rows[0].n, 0, 'a refused beacon is not stored');
    }
  });
});
