/**
 * Hot paths against the floor of this machine, in one run: each route's req/s and p99 beside a
 * bare Koa route (`/healthz`) on the same server, so the ratio survives a busy machine better
 * than the absolute figures do. The API measured is its own process (`api/server.ts`, as
 * production runs it), not the in-process stack whose workers transcode the clips; the load
 * generator (autocannon) runs in another child process.
 *
 *   npm run bench:api -- --seconds 5 --connections 50
 *
 * Needs what the tests need: Postgres (DATABASE_URL, default 127.0.0.1:5432), the Temporal CLI
 * and versitygw (built by ./scripts/test into ~/.cache/vidhost/tools).
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import type { Client } from '@temporalio/client';
import { allRenditionsReady, uploadFormA, waitForVideo } from '../test/support/flow';
import { makeClip } from '../test/support/media';
import { adoptGroup, spawnApi } from '../test/support/child';
import { freePort } from '../test/support/services';
import { startStack, type Stack } from '../test/support/stack';
import { runMain } from '../test/support/main';
import { arg } from './args';
import { autocannon, type Load, type Result, wrk } from './autocannon';

const run = promisify(execFile);


const seconds = arg('seconds', 5);
const connections = arg('connections', 50);

// --wrk: GET routes through wrk (apt-get install wrk) instead of autocannon, as issue 33 measured.
const useWrk = process.argv.includes('--wrk');
const load = async (l: Load): Promise<Result> => (useWrk && (await wrk(l, { connections, seconds }))) || autocannon(l, { connections, seconds });

/**
 * The same load through h2load (nghttp2's load generator, Debian's `nghttp2-client`, C, one
 * thread, HTTP/1.1), which reads bodies in large chunks without parsing them: where autocannon's
 * (and wrk's 8 KB reads') own core is the limit (segments) it shows what the server can do.
 * p99 comes from its per-request log. Undefined when h2load is not installed.
 */
async function loadH2(url: string): Promise<Result | undefined> {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-h2load-')), 'requests.log');
  try {
    const { stdout } = await run('h2load', ['--h1', '-t1', `-c${connections}`, `-D${seconds}`, `--log-file=${log}`, url], { maxBuffer: 1 << 20 });
    const rps = Number(/finished in [\d.]+s, ([\d.]+) req\/s/.exec(stdout)?.[1]);
    const codes = /status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/.exec(stdout);
    const failed = Number(/(\d+) failed, (\d+) errored, (\d+) timeout/.exec(stdout)?.[1] ?? 0);
    // Each line: start (µs since the run began), status, time taken (µs).
    const took = fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => Number(l.split('\t')[2]))
      .sort((a, b) => a - b);
    const p99 = took.length ? took[Math.floor(took.length * 0.99)] / 1000 : NaN;
    const non2xx = codes ? Number(codes[2]) + Number(codes[3]) + Number(codes[4]) : 0;
    return { rps, p99: Math.round(p99 * 10) / 10, non2xx, errors: failed };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  } finally {
    fs.rmSync(path.dirname(log), { recursive: true, force: true });
  }
}

/**
 * Temporal's own ceiling for what `POST /upload/init` asks of it: `connections` concurrent
 * workflow starts for `seconds`, from this process, on a task queue no worker polls (the runs are
 * terminated afterwards). Reported beside the route so its share is visible.
 */
async function temporalStarts(temporal: Client): Promise<{ rps: number; meanMs: number }> {
  const queue = `bench-idle-${Date.now()}`;
  const ids: string[] = [];
  let ms = 0;
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        const id = `bench-start-${ids.length}-${Math.random().toString(36).slice(2)}`;
        const t = performance.now();
        await temporal.workflow.start('videoWorkflow', { workflowId: id, taskQueue: queue, args: [] });
        ms += performance.now() - t;
        ids.push(id);
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  for (let i = 0; i < ids.length; i += 50) {
    await Promise.all(ids.slice(i, i + 50).map((id) => temporal.workflow.getHandle(id).terminate('bench').catch(() => undefined)));
  }
  return { rps: ids.length / elapsed, meanMs: ms / Math.max(1, ids.length) };
}

/** The stack's configuration in a process of its own on a fresh port. */
/**
 * CPU seconds (user + system) a process has used so far, from /proc (Linux), or NaN. Its change
 * over a run divided by the requests served is the route's CPU per request: unlike req/s it does
 * not move with what else the machine's cores are doing, so it compares routes on a shared box.
 */
function cpuSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return NaN;
  }
}

async function apiProcess(stack: Stack, env: Record<string, string>, nodeArgs: string[] = [], tree?: string): Promise<{ url: string; cdn: string; player: string; pid: number; kill: () => Promise<void> }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const api = await spawnApi({ ...stack.env, ...env, PORT: String(port), PUBLIC_BASE_URL: base }, nodeArgs, tree);
  return { url: base, cdn: `${base}/cdn`, player: `${base}/player`, pid: api.pid, kill: () => api.kill() };
}

// A bare Koa app answering every GET with one buffer from memory: the floor for a response of a
// segment's size, where the load generator itself (parsing the bodies) is the limit.
const BYTES_SERVER = `
const Koa = require('koa');
const body = require('fs').readFileSync(process.argv[1]);
const app = new Koa();
app.use((ctx) => { ctx.type = 'video/mp2t'; ctx.body = body; });
app.listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;

async function bytesServer(file: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['-e', BYTES_SERVER, file], { cwd: `${__dirname}/..`, detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  const proc = adoptGroup('bytes-server', child);
  const port = await new Promise<string>((resolve) => child.stdout.once('data', (d) => resolve(String(d).trim())));
  return { url: `http://127.0.0.1:${port}/`, stop: () => void proc.kill('SIGTERM') };
}

async function readyVideo(stack: Stack, clip: string, key: string): Promise<{ id: string; rung: string; segment: string }> {
  const { id } = await uploadFormA({ ...stack, post: (p, b) => stack.post(p, b, key), get: (p) => stack.get(p, key) } as Stack, clip);
  const v = await waitForVideo({ ...stack, get: (p) => stack.get(p, key) } as Stack, id, allRenditionsReady, 300_000);
  const rung = v.renditions[0].name as string;
  return { id, rung, segment: 'seg_00000.ts' };
}

const videoCount = async (s: Stack) => Number((await s.db('videos').count({ n: '*' }).first())?.n ?? 0);

/** What init left for the start outbox when the load stopped, and how long the starts took to catch up. */
async function drainOutbox(s: Stack, created: number): Promise<{ created: number; backlog: number; drainMs: number }> {
  const pending = async () => Number((await s.db('video_workflow_starts').count({ n: '*' }).first())?.n ?? 0);
  const backlog = await pending();
  const retried = Number((await s.db('video_workflow_starts').where('attempts', '>', 0).count({ n: '*' }).first())?.n ?? 0);
  if (retried) console.log(`(${retried} of them after a failed attempt)`);
  const t0 = performance.now();
  while ((await pending()) > 0) {
    if (performance.now() - t0 > 300_000) throw new Error('the start outbox did not drain in 5 minutes');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { created, backlog, drainMs: performance.now() - t0 };
}

async function main(): Promise<void> {
  const clip = await makeClip({ width: 426, height: 240, seconds: 12 });
  // Bench traffic must not be rate limited: it measures the path, not the budget.
  // A shared, busy machine: heartbeats must not time out while the clips transcode.
  const env = { LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000', TRANSCODE_HEARTBEAT_TIMEOUT_MS: '120000' };
  const local = await startStack({ env });
  const s3 = await startStack({ storage: 's3', env, workers: ['workflow', 'transcode'] });
  const ws = await local.newWorkspace('business');
  const ws3 = await s3.newWorkspace('business');
  const auth = { Authorization: `Bearer ${ws.fullKey}` };
  process.stdout.write('transcoding a 12 s 240p clip on both drivers... ');
  const vid = await readyVideo(local, clip, ws.fullKey);
  const vid3 = await readyVideo(s3, clip, ws3.fullKey);
  console.log('ready');
  // A page of 20 to list.
  for (let i = 0; i < 20; i++) {
    await local.post('/v1/upload/init', { filename: `filler-${i}.mp4`, size: 1000, content_type: 'video/mp4' }, ws.fullKey).expect(201);
  }
  // --profile <dir>: the measured API processes write V8 CPU profiles there when they stop.
  const prof = process.argv.includes('--profile') ? ['--cpu-prof', `--cpu-prof-dir=${process.argv[process.argv.indexOf('--profile') + 1]}`] : [];
  // --api-processes N: the measured API as a node:cluster of N processes (API_PROCESSES), as production may run it.
  const processes = arg('api-processes', 1);
  // --api-node-args "<flags>": V8/Node flags for the measured API process (e.g. GC tuning).
  const nodeArgs = process.argv.includes('--api-node-args') ? process.argv[process.argv.indexOf('--api-node-args') + 1].split(/\s+/).filter(Boolean) : [];
  const api = await apiProcess(local, { ...env, API_PROCESSES: String(processes) }, [...prof, ...nodeArgs]);
  const api3 = await apiProcess(s3, env, [...prof, ...nodeArgs]);
  const cdn = `${api.cdn}/v/${vid.id}`;
  const segment = Buffer.from((await fetch(`${cdn}/${vid.rung}/${vid.segment}`).then((r) => r.arrayBuffer())) as ArrayBuffer);
  console.log(`segment ${vid.rung}/${vid.segment}: ${segment.length.toLocaleString('en')} bytes`);
  const segFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-seg-')), 'seg.ts');
  fs.writeFileSync(segFile, segment);
  const bytes = await bytesServer(segFile);
  const init = { method: 'POST' as const, headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ filename: 'b.mp4', size: 1000, content_type: 'video/mp4' }) };

  const routes: Array<[string, Load]> = [
    ['/healthz (floor)', { url: `${api.url}/healthz` }],
    ['GET /v1/videos/{id}', { url: `${api.url}/v1/videos/${vid.id}`, headers: auth }],
    ['GET /v1/videos?limit=20', { url: `${api.url}/v1/videos?limit=20`, headers: auth }],
    ['CDN master.m3u8', { url: `${cdn}/master.m3u8` }],
    [`CDN ${vid.rung}/index.m3u8`, { url: `${cdn}/${vid.rung}/index.m3u8` }],
    [`CDN ${vid.rung} segment (local)`, { url: `${cdn}/${vid.rung}/${vid.segment}` }],
    [`CDN ${vid.rung} segment (S3)`, { url: `${api3.cdn}/v/${vid3.id}/${vid3.rung}/${vid3.segment}` }],
    ['player page', { url: `${api.player}/embed/${vid.id}` }],
    ['POST /v1/upload/init', { url: `${api.url}/v1/upload/init`, ...init }],
    // The same on the S3 driver, whose upload URL is an AWS SigV4 presign rather than a local token.
    ['POST /v1/upload/init (S3)', { url: `${api3.url}/v1/upload/init`, ...init, headers: { ...init.headers, Authorization: `Bearer ${ws3.fullKey}` } }],
  ];
  // The machine is shared: each route is measured right after its own /healthz run, and its
  // ratio is against that adjacent floor.
  // --baseline <dir>: another checkout of this repository (e.g. `git archive <commit> | tar -x -C
  // <dir>`, node_modules linked) runs a second API process on the same stack; every GET route of
  // the local stack is measured on both, alternating which goes first, each after its own
  // /healthz run. --repeat N: N rounds of the whole table, round robin; the median round is shown.
  const baselineDir = process.argv.includes('--baseline') ? path.resolve(process.argv[process.argv.indexOf('--baseline') + 1]) : undefined;
  const baseApi = baselineDir ? await apiProcess(local, { ...env, API_PROCESSES: String(processes) }, [...prof, ...nodeArgs], baselineDir) : undefined;
  const rounds = process.argv.includes('--repeat') ? arg('repeat', 1) : 1;
  type Run = { floor: number; cpuUs: number; floorCpuUs: number } & Result;
  const rows: Array<{ route: string; ratios: number[] } & Run> = [];
  // The measured process's CPU per request over a run (µs), beside req/s (cpuSeconds above).
  const measured = async (l: Load, pid: number): Promise<Result & { cpuUs: number }> => {
    const c0 = cpuSeconds(pid);
    const r = await load(l);
    return { ...r, cpuUs: ((cpuSeconds(pid) - c0) * 1e6) / Math.max(1, r.rps * seconds) };
  };
  const outboxes: Array<{ route: string } & Awaited<ReturnType<typeof drainOutbox>>> = [];
  // --only <text>[,<text>…]: just the routes whose name contains one of them (the floor always runs).
  const only = (process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : '').split(',');
  const picked = (r: string) => only.some((o) => r.includes(o));
  // Each (route, process) measured: this tree's API, and the baseline's for the local stack's GETs.
  const targets: Array<{ route: string; label: string; l: Load; api: { url: string; pid: number } }> = [];
  for (const [route, l] of routes.filter(([r], i) => i === 0 || picked(r))) {
    const mine = route.includes('(S3)') ? api3 : api;
    targets.push({ route, label: baseApi ? `${route} (this tree)` : route, l, api: mine });
    if (baseApi && mine === api && !l.method) targets.push({ route, label: `${route} (baseline)`, l: { ...l, url: l.url.replace(api.url, baseApi.url) }, api: baseApi });
  }
  const runs = new Map<string, Run[]>(targets.map((t) => [t.label, []]));
  for (let round = 0; round < rounds; round++) {
    // Alternate which process goes first, so neither always follows the other.
    const order = round % 2 ? [...targets].reverse().sort((a, b) => routes.findIndex(([r]) => r === a.route) - routes.findIndex(([r]) => r === b.route)) : targets;
    for (const { route, label, l, api: target } of order) {
      process.stdout.write(`${rounds > 1 ? `(${round + 1}/${rounds}) ` : ''}${label}... `);
      const f = route === routes[0][0] ? undefined : await measured({ url: `${target.url}/healthz` }, target.pid);
      const stack = route.includes('(S3)') ? s3 : local;
      const before = route.includes('upload/init') ? await videoCount(stack) : 0;
      const r = await measured(l, target.pid);
      console.log(`${Math.round(r.rps)} req/s${f ? ` (floor ${Math.round(f.rps)})` : ''}, ${Math.round(r.cpuUs)} µs CPU a request${f ? ` (floor ${Math.round(f.cpuUs)})` : ''}`);
      runs.get(label)!.push({ floor: f?.rps ?? r.rps, floorCpuUs: f?.cpuUs ?? r.cpuUs, ...r });
      if (route.includes('upload/init')) outboxes.push({ route, ...(await drainOutbox(stack, (await videoCount(stack)) - before)) });
    }
  }
  for (const { label } of targets) {
    const byRatio = [...runs.get(label)!].sort((x, y) => x.rps / x.floor - y.rps / y.floor);
    rows.push({ route: label, ...byRatio[Math.floor(byRatio.length / 2)], ratios: byRatio.map((x) => x.rps / x.floor) });
  }
  // Segments again, each against a bare Koa route sending the same bytes just before it.
  const segRoutes = routes.filter(([r]) => r.includes('segment') && picked(r));
  const segRows: Array<{ route: string; floor: number } & Result> = [];
  for (const [route, l] of segRoutes) {
    process.stdout.write(`${route} vs the same bytes from a bare Koa route... `);
    const f = await load({ url: bytes.url });
    const r = await load(l);
    console.log(`${Math.round(r.rps)} req/s (floor ${Math.round(f.rps)})`);
    segRows.push({ route, floor: f.rps, ...r });
  }
  // Segments once more through h2load: the bare same-bytes app and each segment path, each right
  // after its own /healthz run, `--repeat N` times (default 3) round robin; the table gives the
  // median ratio, since the floor alone moves ±20 % between runs on this kind of machine.
  const h2Rows: Array<{ route: string; floor: number; ratios: number[] } & Result> = [];
  const repeat = arg('repeat', 3);
  if (segRoutes.length && !process.argv.includes('--no-h2load')) {
    const targets = [['same bytes, bare Koa', bytes.url], ...segRoutes.map(([r, l]) => [r, l.url])] as Array<[string, string]>;
    const runs = new Map<string, Array<{ floor: number } & Result>>(targets.map(([r]) => [r, []]));
    h2: for (let i = 0; i < repeat; i++) {
      for (const [route, url] of targets) {
        process.stdout.write(`h2load (${i + 1}/${repeat}): ${route}... `);
        const f = await loadH2(routes[0][1].url);
        const r = f && (await loadH2(url));
        if (!f || !r) {
          console.log('h2load is not installed (apt-get install nghttp2-client); skipped');
          break h2;
        }
        console.log(`${Math.round(r.rps)} req/s (floor ${Math.round(f.rps)})`);
        runs.get(route)!.push({ floor: f.rps, ...r });
      }
    }
    for (const [route, rs] of runs) {
      if (!rs.length) continue;
      const byRatio = [...rs].sort((x, y) => x.rps / x.floor - y.rps / y.floor);
      const mid = byRatio[Math.floor(byRatio.length / 2)];
      h2Rows.push({ route, ...mid, ratios: byRatio.map((x) => x.rps / x.floor) });
    }
  }
  bytes.stop();

  process.stdout.write('Temporal workflow starts alone... ');
  const t = await temporalStarts(local.temporal);
  console.log(`${Math.round(t.rps)} starts/s`);

  console.log('');
  console.log(`${useWrk ? 'wrk (GET routes; autocannon for POSTs)' : 'autocannon'}: ${connections} connections, ${seconds} s a route; each ratio is against a /healthz run just before it`);
  console.log('(CPU a request: the API process\'s user + system time over the run / requests; "CPU vs /healthz" is /healthz\'s CPU a request over the route\'s, the ratio a saturated core would give)');
  if (rounds > 1) console.log(`(${rounds} rounds, round robin: each row is its median round by ratio; "every round" lists them all, sorted)`);
  console.log('| Route | req/s | p99 | /healthz just before | vs /healthz | every round | CPU a request | CPU vs /healthz | non-2xx/errors |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  const n = (x: number) => Math.round(x).toLocaleString('en');
  for (const r of rows) {
    const all = r.ratios.map((x) => x.toFixed(2)).join(', ');
    console.log(`| ${r.route} | ${n(r.rps)} | ${r.p99} ms | ${n(r.floor)} | ${(r.rps / r.floor).toFixed(2)}x | ${all} | ${Math.round(r.cpuUs)} µs | ${(r.floorCpuUs / r.cpuUs).toFixed(2)}x | ${r.non2xx}/${r.errors} |`);
  }
  if (segRows.length) {
    console.log('');
    console.log(`Segments (${segment.length.toLocaleString('en')} bytes) against a bare Koa app sending the same bytes from memory, just before each:`);
    console.log('| Route | req/s | p99 | same bytes, bare Koa | vs that floor | MB/s |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const r of segRows) {
      console.log(`| ${r.route} | ${n(r.rps)} | ${r.p99} ms | ${n(r.floor)} | ${(r.rps / r.floor).toFixed(2)}x | ${((r.rps * segment.length) / 1e6).toFixed(0)} |`);
    }
  }
  if (h2Rows.length > 1) {
    // Each row is its median round, so its ratio is that round's.
    const same = h2Rows[0].rps / h2Rows[0].floor;
    console.log('');
    console.log(`Segments through h2load (${connections} connections, ${seconds} s each, ${repeat} rounds; each ratio against a /healthz run just before it; the median run shown):`);
    console.log('| Route | req/s | p99 | /healthz just before | vs /healthz (median) | every round | vs same bytes, bare Koa | MB/s | non-2xx/errors |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const r of h2Rows) {
      const ratio = r.rps / r.floor;
      const all = r.ratios.map((x) => x.toFixed(2)).join(', ');
      console.log(`| ${r.route} | ${n(r.rps)} | ${r.p99} ms | ${n(r.floor)} | ${ratio.toFixed(2)}x | ${all} | ${(ratio / same).toFixed(2)}x | ${((r.rps * segment.length) / 1e6).toFixed(0)} | ${r.non2xx}/${r.errors} |`);
    }
  }
  for (const outbox of outboxes) {
    console.log('');
    console.log(
      `${outbox.route}: its workflow starts (the start outbox): ${n(outbox.created)} videos created in ${seconds} s; ` +
        `${n(outbox.backlog)} starts still waiting when the load stopped, all made ${(outbox.drainMs / 1000).toFixed(1)} s later ` +
        `(${n(outbox.created / (seconds + outbox.drainMs / 1000))} starts/s overall)`,
    );
  }
  console.log('');
  console.log(`Temporal alone (${connections} concurrent workflow starts from one client, no API): ${n(t.rps)} starts/s, mean ${t.meanMs.toFixed(1)} ms each`);
  await api.kill();
  await baseApi?.kill();
  await api3.kill();
  await s3.close();
  await local.close();
}

runMain(main);
