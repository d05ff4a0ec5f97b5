import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { ensureRollupSchedule } from '../../lib/analytics/schedule';
import { readyVideo } from '../playback/helpers';
import { uploadFormA } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const VIEWS = 12;

/**
 * Issue 45, "beacons under load": views sent while this stack's encoders are saturated by real
 * ffmpeg ladders are all counted, through the real path — beacons over HTTP, the API's buffer, the
 * rollup's Temporal Schedule on the orchestration queue (every 10 s here), the API's read — within
 * SPEC §18's 60 s, while the encodes still run.
 */
describe('Viewer analytics: every beacon counts under a saturating encode load (issue 45)', function () {
  this.timeout(300_000);
  let s: Stack;
  let target: { id: string };

  before(async function () {
    this.timeout(300_000);
    s = await startStack({ env: { ANALYTICS_ROLLUP_EVERY_SECONDS: '10', TRANSCODE_CONCURRENCY: '2', TRUSTED_PROXIES: '127.0.0.1/32' } });
    const [small] = await Promise.all([makeClip({ width: 320, height: 180, seconds: 4 })]);
    target = await readyVideo(s, small, 'public');
    await ensureRollupSchedule(s.temporal, s.config);
  });

  /** Renditions of this stack's workspace still queued or encoding. */
  const encoding = async () => Number((await s.db('renditions as r').join('videos as v', 'v.id', 'r.video_id').where('v.workspace_id', s.ws.id).whereIn('r.status', ['queued', 'processing']).count({ n: '*' }))[0].n);

  /** Beacons of `views` of `subject` as a player sends them: start and first frame, a heartbeat, the end, a second apart; each view from its own address. */
  async function sendViews(subject: string, views: Array<{ id: string; watchMs: number; address?: string }>, each: (ms: number) => void = () => undefined) {
    const send = async (v: { address?: string }, events: unknown[]) => {
      const t = Date.now();
      const headers: Record<string, string> = { 'Content-Type': 'text/plain', 'User-Agent': UA, ...(v.address ? { 'X-Forwarded-For': v.address } : {}) };
      const r = await fetch(`${s.url}/v1/beacons`, { method: 'POST', headers, body: JSON.stringify(events) });
      assert.equal(r.status, 204);
      each(Date.now() - t);
    };
    const ev = (v: { id: string }, seq: number, event: string, position: number, elapsed: number, watch: number) => ({
      view_id: v.id, seq, subject, event, position, elapsed_ms: elapsed, watch_ms: watch, player: { name: 'load-test', version: '1' },
    });
    await Promise.all(views.map((v) => send(v, [ev(v, 0, 'viewstart', 0, 0, 0), ev(v, 1, 'playing', 0, 400, 0)])));
    await new Promise((r) => setTimeout(r, 1000));
    await Promise.all(views.map((v) => send(v, [ev(v, 2, 'heartbeat', v.watchMs / 2000, 400 + v.watchMs / 2, v.watchMs / 2)])));
    await new Promise((r) => setTimeout(r, 1000));
    await Promise.all(views.map((v) => send(v, [ev(v, 3, 'viewend', v.watchMs / 1000, 400 + v.watchMs, v.watchMs)])));
  }

  /** Waits up to 60 s (SPEC §18) for the API to show `views` views and `watch` seconds of `id`. */
  async function expectCounted(id: string, views: number, watch: number, since: number) {
    let last: { views: number; watch_time_seconds: number } | undefined;
    while (Date.now() - since < 60_000) {
      last = (await s.get(`/v1/videos/${id}/analytics?granularity=hour`).expect(200)).body.totals;
      if (last!.views === views && last!.watch_time_seconds === watch) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    assert.deepEqual({ views: last?.views, watch: last?.watch_time_seconds }, { views, watch }, `after ${Math.round((Date.now() - since) / 1000)} s`);
  }

  it('counts every view sent while every encoder is busy, with its exact watch time, within 60 s', async () => {
    // The load: long, hard-to-compress sources whose ladders keep both encoders busy for minutes.
    const heavy = await makeClip({ width: 1280, height: 720, seconds: 30, content: 'noise', silentAudio: true });
    await Promise.all([0, 1].map(() => uploadFormA(s, heavy, { extra: { title: 'load' } })));
    const deadline = Date.now() + 120_000;
    while ((await encoding()) < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
    assert.ok((await encoding()) >= 2, 'the encoders are busy');

    const views = Array.from({ length: VIEWS }, (_, i) => ({ id: randomUUID(), watchMs: 5000 + i * 1000 }));
    await sendViews(target.id, views);
    const sentAt = Date.now();
    assert.ok((await encoding()) > 0, 'the views were sent while the encoders were busy');
    await expectCounted(target.id, VIEWS, views.reduce((a, v) => a + v.watchMs, 0) / 1000, sentAt);
    assert.ok((await encoding()) > 0, 'counted while the load still runs');
  });

  it('answers beacons at once and counts them all while the database pool is exhausted', async () => {
    // A video nobody has played (its access decision is in no cache) and viewers at new addresses
    // (no leased budget): what a beacon needed the database for, while every pooled connection is
    // busy — as just-in-time cuts under load held them (issue 45).
    const { body } = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public' }).expect(201);
    const probe = new pg.Client({ connectionString: s.config.databaseUrl });
    await probe.connect();
    const HOLD_MS = 12_000;
    const holds = Array.from({ length: 10 }, () => s.db.raw('select pg_sleep(?)', [HOLD_MS / 1000]).catch(() => undefined));
    try {
      const sleeping = async () => Number((await probe.query(`select count(*) as n from pg_stat_activity where datname = current_database() and query like 'select pg_sleep%'`)).rows[0].n);
      const until = Date.now() + 5000;
      while ((await sleeping()) < 10 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      assert.equal(await sleeping(), 10, 'the pool is exhausted');
      const started = Date.now();
      const views = Array.from({ length: VIEWS }, (_, i) => ({ id: randomUUID(), watchMs: 3000 + i * 500, address: `203.0.113.${10 + i}` }));
      const waits: number[] = [];
      await sendViews(body.video_id, views, (ms) => waits.push(ms));
      assert.ok(Date.now() - started < HOLD_MS - 2000, 'the beacons were answered while the pool was still exhausted');
      assert.ok(Math.max(...waits) < 1500, `every beacon answered at once (slowest ${Math.max(...waits)} ms)`);
      await Promise.all(holds);
      await expectCounted(body.video_id, VIEWS, views.reduce((a, v) => a + v.watchMs, 0) / 1000, Date.now());
    } finally {
      await Promise.all(holds);
      await probe.end();
    }
  });
});
