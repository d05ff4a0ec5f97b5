import assert from 'node:assert/strict';
import type { Knex } from 'knex';
import { bucketsSql } from '../../lib/analytics/aggregate';
import { parseVideoId } from '../../lib/ids';
import { waitUntil } from '../playback/helpers';
import { startStack, type Stack } from '../support/stack';

/** The Postgres backends of `db`'s database running a statement that mentions `like` (other than this probe). */
async function running(db: Knex, like: string): Promise<number> {
  const { rows } = await db.raw(
    `select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state = 'active' and query like ?`,
    [`%${like}%`],
  );
  return rows[0].n;
}

/** Sum over a JSON plan's nodes of rows × loops: the rows the executor handled. */
function rowsHandled(node: Record<string, unknown>): number {
  const own = Number(node['Actual Rows'] ?? 0) * Number(node['Actual Loops'] ?? 1);
  return own + ((node.Plans as Array<Record<string, unknown>> | undefined) ?? []).reduce((a, p) => a + rowsHandled(p), 0);
}

/**
 * Issue 45, "a read that never ends": every API statement is bounded by Postgres
 * (API_STATEMENT_TIMEOUT_MS → 503 `query_timeout`), a request whose client went away takes its
 * running statement with it, and the raw-events aggregation is linear in the events, whatever the
 * current hour's statistics say.
 */
describe('Viewer analytics: bounded reads (issue 45)', function () {
  this.timeout(120_000);
  let s: Stack;
  let vid: string;

  before(async function () {
    this.timeout(240_000);
    s = await startStack({ workers: [], env: { API_STATEMENT_TIMEOUT_MS: '1500' } });
    const { body } = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public' }).expect(201);
    vid = body.video_id;
    await s.db('analytics_rollup_state').delete();
  });

  /** Holds an exclusive lock on the rollup's hourly table (what every analytics read reads) until released. */
  async function lockHourly(): Promise<() => Promise<void>> {
    const trx = await s.db.transaction();
    await trx.raw('lock table analytics_hourly in access exclusive mode');
    return async () => void (await trx.rollback());
  }

  it('answers 503 query_timeout when a statement outlasts API_STATEMENT_TIMEOUT_MS, and Postgres stops it', async () => {
    await s.db.raw(`insert into analytics_rollup_state (id, final_before, last_run_at, partial_before) values (true, now(), now(), now()) on conflict (id) do nothing`);
    const release = await lockHourly();
    try {
      const started = Date.now();
      const res = await s.get(`/v1/videos/${vid}/analytics?granularity=hour`).timeout(15_000).expect(503);
      assert.equal(res.body.error.code, 'query_timeout');
      assert.equal(res.headers['retry-after'], '5');
      assert.ok(Date.now() - started < 10_000, `answered after ${Date.now() - started} ms`);
      assert.equal(await running(s.db, 'analytics_hourly where subject_id'), 0, 'the statement is no longer running');
    } finally {
      await release();
      await s.db('analytics_rollup_state').delete();
    }
  });

  it('cancels the running statement of a request whose client went away', async () => {
    // A long bound: only the client's going away can end the statement before the lock is released.
    const long = await startStack({ workers: [], env: { API_STATEMENT_TIMEOUT_MS: '60000' } });
    const { body } = await long.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public' }).expect(201);
    await s.db.raw(`insert into analytics_rollup_state (id, final_before, last_run_at, partial_before) values (true, now(), now(), now()) on conflict (id) do nothing`);
    const release = await lockHourly();
    try {
      const abort = new AbortController();
      const read = fetch(`${long.url}/v1/videos/${body.video_id}/analytics?granularity=hour`, { headers: { Authorization: `Bearer ${long.ws.fullKey}` }, signal: abort.signal }).catch((e: Error) => e);
      await waitUntil(async () => (await running(s.db, 'analytics_hourly where subject_id')) === 1, 'the read waiting on the lock');
      abort.abort();
      assert.ok((await read) instanceof Error);
      await waitUntil(async () => (await running(s.db, 'analytics_hourly where subject_id')) === 0, 'the statement cancelled', 5_000);
    } finally {
      await release();
      await s.db('analytics_rollup_state').delete();
    }
  });

  it('aggregates raw events in time linear in the events when the statistics say "one row" (a fresh hour)', async () => {
    const uuid = parseVideoId(vid)!;
    const VIEWS = 400;
    const EVENTS = 10;
    // A fresh partition whose statistics know nothing of the hour: what the planner saw when
    // 5,000 views of one video ran for 28 minutes.
    await s.db.raw(`select analytics_ensure_partitions(current_date - 1, current_date + 1)`);
    await s.db.raw(
      `insert into analytics_events (day, received_at, view_id, seq, subject_id, event, position, elapsed_ms, watch_ms, workspace_id, viewer_hash, browser, os, device, player)
       select current_date, st + e.s * interval '1 second', md5(? || v)::uuid, e.s, ?,
              case e.s when 0 then 'viewstart' when 1 then 'playing' when ${EVENTS - 1} then 'viewend' else 'heartbeat' end,
              e.s, e.s * 1000, greatest(e.s - 1, 0) * 1000, case when e.s = 0 then ? end, case when e.s = 0 then v::bigint end,
              case when e.s = 0 then 'Chrome' end, case when e.s = 0 then 'Linux' end, case when e.s = 0 then 'desktop' end, case when e.s = 0 then 'test' end
         from (select v, greatest(date_trunc('hour', now()), now() - interval '20 minutes') + (v % 300) * interval '1 second' as st from generate_series(1, ?) v) x
        cross join generate_series(0, ${EVENTS - 1}) e(s)`,
      [uuid, uuid, s.ws.id, VIEWS],
    );
    const now = Date.now();
    const from = new Date(Math.floor(now / 3600_000) * 3600_000);
    const q = bucketsSql({ kind: 'subject', subjectId: uuid }, from, new Date(from.getTime() + 3600_000), 3);
    const rows = await s.db.transaction(async (trx) => {
      await trx.raw('set local statement_timeout = 0');
      return (await trx.raw(`explain (analyze, format json) ${q.sql}`, q.bindings)).rows as Array<Record<string, Array<{ Plan: Record<string, unknown> }>>>;
    });
    const plan = rows[0]['QUERY PLAN'][0].Plan;
    const handled = rowsHandled(plan);
    // Linear: each event passes a few nodes (the lateral fetch, the windows, the per-view
    // aggregate). The quadratic plan re-ran the per-view aggregate once per view: VIEWS × events.
    assert.ok(handled < 40 * VIEWS * EVENTS, `the executor handled ${handled} rows for ${VIEWS * EVENTS} events`);
    const answer = (await s.get(`/v1/videos/${vid}/analytics?granularity=hour`).expect(200)).body;
    assert.equal(answer.totals.views, VIEWS);
    assert.equal(answer.totals.watch_time_seconds, VIEWS * (EVENTS - 2));
  });
});
