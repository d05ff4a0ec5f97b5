/**
 * Viewer analytics (SPEC §18, issue 24), in one run:
 *  1. beacon ingest (`POST /v1/beacons`, a batch of 5 events per request, a new view each — or
 *     `--views N` repeated) at c connections against `/healthz` on the same API process, right
 *     before it, with the CPU each request cost the API process and Postgres;
 *  2. the rollup's time over `--events` raw events (seeded with generate_series SQL over the last
 *     23 hours — or `--days N` days — across 50 videos);
 *  3. the API's latency (p99) for the busiest video's analytics at that volume;
 *  4. raw bytes per event on disk (heap + indexes of every partition).
 *
 *   npx tsx bench/analytics.ts --events 10000000 --seconds 10 --connections 50
 *
 * `--current-hour 5000,50000` (issue 45) measures instead, for each count, one public video with
 * that many views of 60 events each in the current hour (300,000 events at 5,000): the read
 * before the rollup's first run (the raw path, bounded by API_STATEMENT_TIMEOUT_MS), the rollup
 * run that then writes the hour, and the video's analytics read at c=10 through wrk (autocannon
 * when wrk is not installed) for `--seconds`:
 *
 *   npx tsx bench/analytics.ts --current-hour 5000,50000 --seconds 10
 *
 * Needs what the tests need (Postgres, the Temporal CLI), as `./scripts/test` provisions them.
 */
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { rollupDays, rollupWindow, writeRollupState } from '../lib/analytics/rollup';
import { parseVideoId } from '../lib/ids';
import { spawnApi } from '../test/support/child';
import { freePort } from '../test/support/services';
import { startStack } from '../test/support/stack';
import { runMain } from '../test/support/main';
import { arg } from './args';
import { wrk } from './autocannon';
import { runRollup } from '../lib/analytics/rollup';
import type { Knex } from 'knex';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const run = promisify(execFile);
const seconds = arg('seconds', 10);
const connections = arg('connections', 50);
const events = arg('events', 10_000_000);
const VIDEOS = 50;
// The span the raw events are seeded over: 1 = the last 23 hours (the earlier runs' shape), 30 =
// the last 30 days (issue 36's goal); the reads then also ask for the whole span by day.
const days = arg('days', 1);
const SPAN_HOURS = days * 24 - 1;

// The load generator runs in its own process; each beacon request is one view's 5 events. By
// default every request is a new view (as real traffic is: a retried beacon is rare); --views N
// repeats a set of N views instead (the earlier runs' shape, 20,000: repeats then cost the server
// only their unique-index lookup). Bodies are made from a template with a counter, so the
// generator's own CPU does not weigh on the machine it shares with the server.
const views = arg('views', 0);
const LOADER = `
const autocannon = require('autocannon');
const { randomUUID } = require('node:crypto');
const o = JSON.parse(process.argv[1]);
if (o.subject) {
  const names = ['viewstart', 'playing', 'heartbeat', 'heartbeat', 'viewend'];
  const parts = JSON.stringify(names.map((event, seq) => ({ view_id: '@V@', seq, subject: o.subject, event, position: seq * 10, elapsed_ms: seq * 10000, watch_ms: seq * 9000, rendition: '720p', bitrate: 2500000, player: { name: 'bench', version: '1' } }))).split('@V@');
  const prefix = randomUUID().slice(0, 24); // a random run prefix, then the view's counter as the last 12 hex digits
  const body = (n) => parts.join(prefix + n.toString(16).padStart(12, '0'));
  const bodies = o.views ? Array.from({ length: o.views }, (_, n) => body(n)) : null;
  let i = 0;
  o.requests = [{ method: 'POST', headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' },
    setupRequest: (req) => { req.body = bodies ? bodies[i++ % bodies.length] : body(i++); return req; } }];
}
autocannon(o, (err, r) => {
  if (err) { console.error(err); process.exit(1); }
  console.log(JSON.stringify({ rps: r.requests.average, p99: r.latency.p99, p50: r.latency.p50, non2xx: r.non2xx, errors: r.errors + r.timeouts, total: r.requests.total }));
});`;

interface Result {
  rps: number;
  p99: number;
  p50: number;
  non2xx: number;
  errors: number;
  total: number;
}

async function load(o: Record<string, unknown>): Promise<Result> {
  const { stdout } = await run(process.execPath, ['-e', LOADER, JSON.stringify({ connections, duration: seconds, ...o })], { cwd: `${__dirname}/..`, maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

/** The 25 functions with the most self time in the V8 CPU profile(s) of `dir`, with their share. */
async function summariseProfile(dir: string): Promise<string> {
  const self = new Map<string, number>();
  let total = 0;
  for (const f of (await readdir(dir)).filter((n) => n.endsWith('.cpuprofile'))) {
    const p = JSON.parse(await readFile(path.join(dir, f), 'utf8')) as {
      nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
      samples: number[];
      timeDeltas: number[];
    };
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    p.samples.forEach((id, i) => {
      const c = byId.get(id)!.callFrame;
      const key = `${c.functionName || '(anonymous)'} ${c.url.replace(/^.*node_modules\//, '~/').replace(/^file:\/\/.*?\/(api|lib)\//, '$1/')}:${c.lineNumber + 1}`;
      const dt = p.timeDeltas[i] ?? 0;
      self.set(key, (self.get(key) ?? 0) + dt);
      total += dt;
    });
  }
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25);
  return `\nCPU profile of the read API process (self time, ${(total / 1e6).toFixed(1)} s sampled):\n` + top.map(([k, us]) => `${((100 * us) / total).toFixed(1).padStart(5)} %  ${k}`).join('\n');
}

/** CPU time (ms, user + system) a process has used so far, from /proc (0 once it is gone). */
async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return f.length > 13 ? ((Number(f[11]) + Number(f[12])) * 1000) / 100 : 0; // utime, stime in USER_HZ (100)
}

/**
 * A read load, with what each request cost in CPU: the API process's and the Postgres backends'
 * of the bench's database (the API's pool), measured from /proc around the load — the service
 * time a request costs this machine's two cores, whatever the queueing.
 */
async function measuredLoad(db: Knex, apiPid: number, o: Record<string, unknown>, settle?: () => Promise<void>): Promise<Result & { apiCpu: number; pgCpu: number }> {
  const backends = async () => (await db.raw(`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`)).rows.map((r: { pid: number }) => r.pid) as number[];
  const sum = async (pids: number[]) => (await Promise.all(pids.map(cpuMs))).reduce((a, b) => a + b, 0);
  const before = await backends();
  const [api0, pg0] = [await cpuMs(apiPid), await sum(before)];
  const r = await load(o);
  if (settle) await settle();
  const after = [...new Set([...before, ...(await backends())])];
  const [api1, pg1] = [await cpuMs(apiPid), await sum(after)];
  return { ...r, apiCpu: (api1 - api0) / r.total, pgCpu: Math.max(0, pg1 - pg0) / r.total };
}

/**
 * Issue 45: `views` views of one public video in the current hour, 60 events each (viewstart,
 * playing, 57 heartbeats, viewend; 1 s apart, 59 s watched), started over the hour so far.
 */
async function seedCurrentHour(db: Knex, subject: string, workspaceId: string, views: number): Promise<void> {
  await db.raw(`select analytics_ensure_partitions(current_date - 1, current_date + 1)`);
  await db.raw(
    `insert into analytics_events (day, received_at, view_id, seq, subject_id, event, position, elapsed_ms, watch_ms, bitrate, rendition, workspace_id, viewer_hash, browser, os, device, player)
     select (st + e.s * interval '1 second')::date, st + e.s * interval '1 second', md5(? || v)::uuid, e.s, ?,
            case e.s when 0 then 'viewstart' when 1 then 'playing' when 59 then 'viewend' else 'heartbeat' end,
            e.s, e.s * 1000, greatest(e.s - 1, 0) * 1000, 2500000, '720p', case when e.s = 0 then ? end, case when e.s = 0 then v::bigint end,
            case when e.s = 0 then 'Chrome' end, case when e.s = 0 then 'Linux' end, case when e.s = 0 then 'desktop' end, case when e.s = 0 then 'bench 1' end
       from (select v, date_trunc('hour', now()) + (v::float8 / ? * extract(epoch from now() - interval '1 minute' - date_trunc('hour', now()))) * interval '1 second' as st
               from generate_series(1, ?) v) x
      cross join generate_series(0, 59) e(s)`,
    [subject, subject, workspaceId, views, views],
  );
}

/** `--current-hour N,M`: the read and the rollup at N (and M) views of one video within the current hour. */
async function currentHour(counts: number[]): Promise<void> {
  // The stack's own pool seeds millions of rows: unbounded. The API under test keeps its bound.
  const env = { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000' };
  const stack = await startStack({ workers: [], env: { ...env, API_STATEMENT_TIMEOUT_MS: '0' } });
  const port = await freePort();
  const api = await spawnApi({ ...stack.env, ...env, API_STATEMENT_TIMEOUT_MS: process.env.API_STATEMENT_TIMEOUT_MS ?? '15000', PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` });
  const ws = await stack.newWorkspace('business');
  const headers = { Authorization: `Bearer ${ws.fullKey}` };
  const rows: string[] = [];
  for (const n of counts) {
    const { body } = await stack.post('/v1/upload/init', { filename: 'v.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public' }, ws.fullKey).expect(201);
    const uuid = parseVideoId(body.video_id)!;
    await stack.db('videos').where({ id: uuid }).update({ duration_seconds: 600 });
    process.stdout.write(`${n.toLocaleString('en')} views (${(n * 60).toLocaleString('en')} events) in the current hour: seeding... `);
    let t = performance.now();
    await seedCurrentHour(stack.db, uuid, ws.id, n);
    console.log(`${((performance.now() - t) / 1000).toFixed(1)} s`);
    const url = `${api.url}/v1/videos/${body.video_id}/analytics?granularity=hour&from=${encodeURIComponent(new Date(Math.floor(Date.now() / 3600_000) * 3600_000).toISOString())}`;
    // Before the rollup's first run a read aggregates raw events (bounded by the statement timeout).
    await stack.db('analytics_rollup_state').delete();
    t = performance.now();
    const first = await fetch(url, { headers });
    const rawMs = performance.now() - t;
    const rawAnswer = first.ok ? `${((await first.json()) as { totals: { views: number } }).totals.views.toLocaleString('en')} views` : `${first.status} ${((await first.json()) as { error: { code: string } }).error.code}`;
    t = performance.now();
    await runRollup(stack.db, { rawDays: 30, lookbackHours: 2, settleMs: 0 });
    const rollupMs = performance.now() - t;
    const views = ((await (await fetch(url, { headers })).json()) as { totals: { views: number } }).totals.views;
    const read = (await wrk({ url, headers }, { connections: 10, seconds })) ?? (await load({ url, headers, connections: 10 }));
    rows.push(
      `| ${n.toLocaleString('en')} views / ${(n * 60).toLocaleString('en')} events | ${rawAnswer} in ${(rawMs / 1000).toFixed(2)} s | ${(rollupMs / 1000).toFixed(1)} s | ${views.toLocaleString('en')} | p99 ${read.p99} ms, ${Math.round(read.rps)} req/s, non-2xx ${read.non2xx}, errors ${read.errors} |`,
    );
    console.log(rows[rows.length - 1]);
  }
  await api.kill('SIGTERM');
  console.log(`
| current hour | read before the first rollup (raw, c=1) | rollup run | views read after it | GET /v1/videos/{id}/analytics?granularity=hour, c=10 |
|---|---|---|---|---|
${rows.join('\n')}`);
  await stack.close();
}

async function main(): Promise<void> {
  const hourArg = process.argv.indexOf('--current-hour');
  if (hourArg >= 0) return currentHour(process.argv[hourArg + 1].split(',').map(Number));
  // The bench's one address sends far more than a viewer would: both limits out of the way.
  const env = { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000', ANALYTICS_BEACONS_PER_MINUTE: '1000000000' };
  const stack = await startStack({ workers: [], env });
  const ws = await stack.newWorkspace('business');
  const ids: string[] = [];
  for (let i = 0; i < VIDEOS; i++) {
    const { body } = await stack.post('/v1/upload/init', { filename: `v${i}.mp4`, size: 1000, content_type: 'video/mp4', visibility: 'public' }, ws.fullKey).expect(201);
    ids.push(body.video_id);
  }
  const uuids = ids.map((id) => parseVideoId(id)!);
  await stack.db('videos').whereIn('id', uuids).update({ duration_seconds: 600 });
  const port = await freePort();
  // --profile-ingest: the ingest API process writes a V8 CPU profile, printed after the ingest
  // load (where a beacon request's CPU goes); the run ends there.
  const profileIngest = process.argv.includes('--profile-ingest');
  const ingestProfDir = profileIngest ? await mkdtemp(path.join(tmpdir(), 'analytics-ingest-prof-')) : '';
  const api = await spawnApi({ ...stack.env, ...env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }, profileIngest ? ['--cpu-prof', '--cpu-prof-dir', ingestProfDir] : []);

  // 1. Ingest against the floor, each with its CPU a request (the API process's and the
  // Postgres backends' of the bench's database; the ingest's until its buffer has drained).
  process.stdout.write('/healthz (floor)... ');
  const floor = await measuredLoad(stack.db, api.pid, { url: `${api.url}/healthz` });
  console.log(`${Math.round(floor.rps)} req/s`);
  process.stdout.write(`POST /v1/beacons (5 events each, ${views ? `${views.toLocaleString('en')} views repeated` : 'a new view each'})... `);
  // Until the buffer has drained: the count stops growing for two flush intervals (at most 60 s).
  const count = async () => Number((await stack.db.raw(`select count(*)::int as n from analytics_events where subject_id = ?`, [uuids[1]])).rows[0].n);
  let written = 0;
  const drained = async () => {
    written = await count();
    for (let still = 0, until = Date.now() + 60_000; still < 2 && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 1000));
      const n = await count();
      still = n === written ? still + 1 : 0;
      written = n;
    }
  };
  const ingest = await measuredLoad(stack.db, api.pid, { url: `${api.url}/v1/beacons`, subject: ids[1], views }, drained);
  console.log(`${Math.round(ingest.rps)} req/s (${(ingest.rps / floor.rps).toFixed(2)}× /healthz); CPU a request: /healthz API ${floor.apiCpu.toFixed(3)} ms; beacons API ${ingest.apiCpu.toFixed(3)} ms + Postgres ${ingest.pgCpu.toFixed(3)} ms`);
  // --ingest-only (for comparing ingest alone, run after run) and --profile-ingest end the run here.
  if (profileIngest || process.argv.includes('--ingest-only')) {
    console.log(`events accepted / distinct written: ${(ingest.total * 5).toLocaleString('en')} / ${written.toLocaleString('en')}; /healthz p99 ${floor.p99} ms, beacons p99 ${ingest.p99} ms, non-2xx ${ingest.non2xx}, errors ${ingest.errors}`);
    await api.kill('SIGTERM');
    if (profileIngest) console.log((await summariseProfile(ingestProfDir)).replace('read API process', 'ingest API process'));
    await stack.close();
    return;
  }

  // 2. Seed raw events with SQL: views of 10 events over the last SPAN_HOURS, spread over 50 videos.
  const seedViews = Math.ceil(events / 10);
  process.stdout.write(`seeding ${events.toLocaleString('en')} raw events (${seedViews.toLocaleString('en')} views)... `);
  let t = performance.now();
  await stack.db.raw(`select analytics_ensure_partitions(current_date - ${days + 1}, current_date + 1)`);
  await stack.db.raw(`create temporary table bench_subjects (i int primary key, subject text)`).catch(() => undefined);
  await stack.db.raw(`insert into bench_subjects select ordinality - 1, s from unnest(?::text[]) with ordinality as s`, [`{${uuids.join(',')}}`]);
  const seed = `
    insert into analytics_events (day, received_at, view_id, seq, subject_id, event, position, elapsed_ms, watch_ms, bitrate, rendition, workspace_id, viewer_hash, browser, os, device, player)
    select (st + e.s * interval '10 seconds')::date, st + e.s * interval '10 seconds', vid, e.s, subj,
           case e.s when 0 then 'viewstart' when 1 then 'playing' when 9 then 'viewend' when 4 then 'rebufferstart' when 5 then 'rebufferend' else 'heartbeat' end,
           e.s * 10, e.s * 10000 + case when e.s = 1 then (v % 2000) else 0 end, greatest(e.s - 1, 0) * 9000, 2500000, case when v % 3 = 0 then '360p' else '720p' end,
           case when e.s = 0 then ? end, case when e.s = 0 then (v % 100000)::bigint end,
           case when e.s = 0 then (array['Chrome','Safari','Firefox','Edge'])[1 + v % 4] end,
           case when e.s = 0 then (array['Windows','macOS','iOS','Android','Linux'])[1 + v % 5] end,
           case when e.s = 0 then (array['desktop','mobile','tablet'])[1 + v % 3] end,
           case when e.s = 0 then 'bench 1' end
      from (select v, md5('bench' || v)::uuid as vid,
                   date_trunc('second', now()) - interval '${SPAN_HOURS} hours' + (v::bigint * ${SPAN_HOURS * 3600} / ?) * interval '1 second' as st,
                   (select subject from bench_subjects where i = v % ${VIDEOS}) as subj
              from generate_series(1, ?) v) x
      cross join generate_series(0, 9) e(s)`;
  await stack.db.raw(seed, [ws.id, seedViews, seedViews]);
  const seedMs = performance.now() - t;
  console.log(`${(seedMs / 1000).toFixed(1)} s`);
  // What autovacuum does to an insert-only table on its own (PostgreSQL ≥ 13): statistics, and
  // the visibility map that lets reads of starts be index-only scans.
  await stack.db.raw(`vacuum (analyze) analytics_events`);

  // 4. Bytes per event.
  const { rows: size } = await stack.db.raw(`
    select sum(pg_total_relation_size(c.oid))::bigint as bytes, (select count(*) from analytics_events)::bigint as n
      from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent where p.relname = 'analytics_events'`);

  // 3a. The rollup over the whole window (what a first run or a catch-up does).
  const hour = 3600_000;
  const from = new Date(Math.floor((Date.now() - 24 * hour) / hour) * hour);
  const to = new Date(Math.floor(Date.now() / hour) * hour + hour);
  const spanFrom = new Date(Math.floor((Date.now() - (SPAN_HOURS + 1) * hour) / hour) * hour);
  process.stdout.write(`rollup of the last ${SPAN_HOURS + 2} hours... `);
  t = performance.now();
  // One window, as the earlier runs did, for a day; a day at a time (as runRollup chunks) for more.
  const r1 = { rows: 0 };
  const step = days === 1 ? to.getTime() - spanFrom.getTime() : 24 * hour;
  for (let a = spanFrom.getTime(); a < to.getTime(); a += step) {
    r1.rows += (await rollupWindow(stack.db, new Date(a), new Date(Math.min(to.getTime(), a + step)), { rawDays: 30, lookbackHours: 3 })).rows;
  }
  const rollupMs = performance.now() - t;
  console.log(`${(rollupMs / 1000).toFixed(1)} s (${r1.rows} hourly rows)`);
  // 3b. A steady-state run: the last lookback + 1 hours.
  t = performance.now();
  // Its cut is where a read's raw part starts; the worst case a read meets is just before the
  // next run ends: one schedule interval (60 s), the run's own length and the settle margin ago.
  const runAt = Date.now();
  const cut = new Date(runAt - 60_000 - 7_000);
  await rollupWindow(stack.db, new Date(to.getTime() - 4 * hour), cut, { rawDays: 30, lookbackHours: 3 });
  const steadyMs = performance.now() - t;
  // The 25-hour run above filled the current hour whole; a cut in the previous hour leaves it behind.
  for (const table of ['analytics_hourly', 'analytics_hourly_breakdowns']) await stack.db.raw(`delete from ?? where hour >= ?`, [table, cut.toISOString()]);
  await rollupDays(stack.db, cut, to);
  await writeRollupState(stack.db, new Date(to.getTime() - 4 * hour), new Date(runAt), cut);
  // Statistics for the rollup's tables, as autovacuum would have them after their first fill.
  await stack.db.raw(`analyze analytics_hourly, analytics_hourly_breakdowns, analytics_daily, analytics_daily_breakdowns`);

  if (process.argv.includes('--explain')) {
    // The read's own queries, as the API sends them: a video's and the workspace's (each once warm).
    const { readBuckets } = await import('../lib/analytics/read');
    const o = { rawDays: 30, lookbackHours: 3 };
    const { hourAligned } = await import('../lib/analytics/read');
    const w = hourAligned({ from, to: new Date() });
    const wDays = hourAligned({ from: spanFrom, to: new Date() });
    for (const [name, scope, range, g] of [
      ['video, 25 h by hour', { kind: 'subject', subjectId: uuids[0] }, w, 'hour'],
      ['workspace, 25 h by hour', { kind: 'workspace', workspaceId: ws.id }, w, 'hour'],
      ...(days > 1
        ? ([
            [`video, ${days} days by day`, { kind: 'subject', subjectId: uuids[0] }, wDays, 'day'],
            [`workspace, ${days} days by day`, { kind: 'workspace', workspaceId: ws.id }, wDays, 'day'],
          ] as const)
        : []),
    ] as const) {
      const seen: Array<{ sql: string; bindings: unknown[] }> = [];
      const listen = (q: { sql: string; bindings: unknown[] }) => seen.push(q);
      await readBuckets(stack.db, scope, range, o, g);
      stack.db.on('query', listen);
      await readBuckets(stack.db, scope, range, o, g);
      stack.db.removeListener('query', listen);
      for (const q of seen) {
        const plan = await stack.db.raw(`explain (analyze, buffers) ${q.sql.replace(/\$\d+/g, '?')}`, q.bindings as never);
        const lines = plan.rows.map((r: Record<string, string>) => r['QUERY PLAN']);
        console.log(`\n-- ${name}: ${q.sql.replace(/\s+/g, ' ').slice(0, 100)}…\n${process.argv.includes('--full') ? lines.join('\n') : lines.filter((l: string) => /^\S|Planning|Execution/.test(l)).join('\n')}`);
      }
    }
  }
  // --profile: the reads go to a second API process that writes a V8 CPU profile on exit, and
  // its heaviest functions (self time) are printed: where a read's API milliseconds go.
  const profile = process.argv.includes('--profile');
  const profDir = profile ? await mkdtemp(path.join(tmpdir(), 'analytics-prof-')) : '';
  const readApi = profile
    ? await spawnApi({ ...stack.env, ...env, PORT: String(await freePort()), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` }, ['--cpu-prof', '--cpu-prof-dir', profDir])
    : api;
  // 3c. API latency: the busiest video's analytics over the last 25 hours by hour, and the
  // workspace's (both from the rollup's rows, as of the cut above).
  const url = `${readApi.url}/v1/videos/${ids[0]}/analytics?from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(new Date().toISOString())}&granularity=hour`;
  const sample = await (await fetch(url, { headers: { Authorization: `Bearer ${ws.fullKey}` } })).json();
  process.stdout.write(`GET a video's analytics (${sample.totals.views.toLocaleString('en')} views)... `);
  const read = await measuredLoad(stack.db, readApi.pid, { url, headers: { Authorization: `Bearer ${ws.fullKey}` }, connections: 10 });
  console.log(`p99 ${read.p99} ms`);
  // One connection: close to the service time when the machine is busy.
  const read1 = await measuredLoad(stack.db, readApi.pid, { url, headers: { Authorization: `Bearer ${ws.fullKey}` }, connections: 1 });
  const wsUrl = `${readApi.url}/v1/analytics?from=${encodeURIComponent(from.toISOString())}&granularity=hour`;
  const wsRead = await measuredLoad(stack.db, readApi.pid, { url: wsUrl, headers: { Authorization: `Bearer ${ws.fullKey}` }, connections: 10 });
  // The whole span by day (the dashboard's 7- and 30-day views): whole days from the daily rows.
  const spanQuery = `from=${encodeURIComponent(spanFrom.toISOString())}&granularity=day`;
  const dayRead = days > 1 ? await measuredLoad(stack.db, readApi.pid, { url: `${readApi.url}/v1/videos/${ids[0]}/analytics?${spanQuery}`, headers: { Authorization: `Bearer ${ws.fullKey}` }, connections: 10 }) : null;
  const wsDayRead = days > 1 ? await measuredLoad(stack.db, readApi.pid, { url: `${readApi.url}/v1/analytics?${spanQuery}`, headers: { Authorization: `Bearer ${ws.fullKey}` }, connections: 10 }) : null;

  await api.kill('SIGTERM');
  if (profile) {
    await readApi.kill('SIGTERM');
    console.log(await summariseProfile(profDir));
  }
  const n = Number(size[0].n);
  console.log(`\n| measure | figure |\n|---|---|`);
  console.log(`| /healthz (floor), c=${connections} | ${Math.round(floor.rps)} req/s, p99 ${floor.p99} ms; CPU a request: API ${floor.apiCpu.toFixed(3)} ms |`);
  console.log(`| POST /v1/beacons (5 events), c=${connections} | ${Math.round(ingest.rps)} req/s (${(ingest.rps / floor.rps).toFixed(2)}× floor), p99 ${ingest.p99} ms, non-2xx ${ingest.non2xx}, errors ${ingest.errors}; CPU a request: API ${ingest.apiCpu.toFixed(3)} ms, Postgres ${ingest.pgCpu.toFixed(3)} ms |`);
  console.log(`| events accepted / distinct events written (${views ? `${views.toLocaleString('en')} views × 5 repeated; repeats are dropped by the unique index` : 'a new view a request'}) | ${(ingest.total * 5).toLocaleString('en')} / ${written.toLocaleString('en')} |`);
  console.log(`| seed ${n.toLocaleString('en')} raw events (SQL) | ${(seedMs / 1000).toFixed(1)} s |`);
  console.log(`| rollup, ${SPAN_HOURS + 2} hours of ${n.toLocaleString('en')} events | ${(rollupMs / 1000).toFixed(1)} s |`);
  console.log(`| rollup, steady state (last 4 hours) | ${(steadyMs / 1000).toFixed(1)} s |`);
  console.log(`| GET /v1/videos/{id}/analytics (${sample.totals.views.toLocaleString('en')} views), c=10 | p50 ${read.p50} ms, p99 ${read.p99} ms, ${Math.round(read.rps)} req/s, non-2xx ${read.non2xx}; CPU a request: API ${read.apiCpu.toFixed(2)} ms, Postgres ${read.pgCpu.toFixed(2)} ms |`);
  console.log(`| same, c=1 | p50 ${read1.p50} ms, p99 ${read1.p99} ms; CPU a request: API ${read1.apiCpu.toFixed(2)} ms, Postgres ${read1.pgCpu.toFixed(2)} ms |`);
  console.log(`| GET /v1/analytics (workspace, 50 videos), c=10 | p50 ${wsRead.p50} ms, p99 ${wsRead.p99} ms, ${Math.round(wsRead.rps)} req/s, non-2xx ${wsRead.non2xx}; CPU a request: API ${wsRead.apiCpu.toFixed(2)} ms, Postgres ${wsRead.pgCpu.toFixed(2)} ms |`);
  for (const [label, r] of [[`GET /v1/videos/{id}/analytics, ${days} days by day, c=10`, dayRead], [`GET /v1/analytics, ${days} days by day, c=10`, wsDayRead]] as const) {
    if (r) console.log(`| ${label} | p50 ${r.p50} ms, p99 ${r.p99} ms, ${Math.round(r.rps)} req/s, non-2xx ${r.non2xx}; CPU a request: API ${r.apiCpu.toFixed(2)} ms, Postgres ${r.pgCpu.toFixed(2)} ms |`);
  }
  console.log(`| raw bytes per event on disk (heap + indexes) | ${Math.round(Number(size[0].bytes) / n)} |`);
  await stack.close();
}

runMain(main);
