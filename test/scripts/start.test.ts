import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '../../lib/db';
import { randomToken } from '../../lib/ids';
import { putFile } from '../support/flow';
import { makeClip } from '../support/media';
import { freePort } from '../support/services';

const root = path.resolve(__dirname, '..', '..');

interface Proc {
  pid: number;
  ppid: number;
  sid: number;
  state: string;
  cmd: string;
}

function readProc(pid: number): Proc | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
    return { pid, state: rest[0], ppid: Number(rest[1]), sid: Number(rest[3]), cmd };
  } catch {
    return undefined;
  }
}

function allProcs(): Proc[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => readProc(Number(d)))
    .filter((p): p is Proc => !!p);
}

/** `pid` and everything below it (children started with setsid are still its children). */
function tree(pid: number): Proc[] {
  const procs = allProcs();
  const out: Proc[] = [];
  const walk = (p: number) => {
    for (const c of procs.filter((x) => x.ppid === p)) {
      out.push(c);
      walk(c.pid);
    }
  };
  const self = procs.find((p) => p.pid === pid);
  if (self) out.push(self);
  walk(pid);
  return out;
}

const alive = (pid: number) => {
  const p = readProc(pid);
  return !!p && p.state !== 'Z';
};

async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number, log: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms; scripts/start said:\n${log()}`);
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(port, '127.0.0.1', () => {
      c.end();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

async function healthy(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
  } catch {
    return false;
  }
}

/**
 * scripts/start as a script or an IDE runs it: in the background of a non-interactive bash (which
 * starts it with SIGINT ignored), stopped by a signal sent to its pid.
 */
describe('scripts/start supervision', function () {
  this.timeout(300_000);
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const dbName = `vidhost_faults_start_${randomToken(4).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
  const admin = createDb(adminUrl, 1);
  /** One database per scripts/start run: each bootstraps its own workspace and prints its key once. */
  const databases: string[] = [];
  let tmp: string;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-start-'));
  });
  after(async () => {
    for (const db of databases) await admin.raw(`drop database if exists ${db} with (force)`);
    await admin.destroy();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  interface Started {
    port: number;
    /** The live edge's RTMP port (SPEC §17, §22: the edge is the only ingest). */
    rtmpPort: number;
    /** The live hooks' port (the key check, LIVE_SRT_CHECK_PORT, loopback). */
    hooksPort: number;
    /** The live edge's internal HTTP port (LIVE_EDGE_HTTP_PORT). */
    edgePort: number;
    startPid: number;
    log: () => string;
    /** Sends `signal` to scripts/start and asserts that it exits leaving no process behind. */
    stop(signal: 'SIGINT' | 'SIGTERM'): Promise<void>;
    kill(): void;
  }

  async function startScript(name: string, extra: Record<string, string | undefined> = {}): Promise<Started> {
    const [port, temporalPort, uiPort, metricsPort, sdkMetricsPort, apiMetricsPort, rtmpPort, srtPort, srtCheckPort, edgePort, webrtcPort] = [
      await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort(),
    ];
    const u = new URL(adminUrl);
    const db = `${dbName}_${name.toLowerCase()}`;
    await admin.raw(`create database ${db}`);
    databases.push(db);
    u.pathname = `/${db}`;
    const dataDir = path.join(tmp, name);
    const logFile = path.join(tmp, `${name}.log`);
    const env = {
      ...process.env,
      PORT: String(port),
      TEMPORAL_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(uiPort),
      METRICS_PORT: String(metricsPort),
      API_METRICS_PORT: String(apiMetricsPort),
      TEMPORAL_METRICS_PORT: String(sdkMetricsPort),
      LIVE_RTMP_PORT: String(rtmpPort),
      LIVE_SRT_PORT: String(srtPort),
      LIVE_SRT_CHECK_PORT: String(srtCheckPort),
      LIVE_EDGE_HTTP_PORT: String(edgePort),
      LIVE_WEBRTC_UDP_PORT: String(webrtcPort),
      VH_DATA_DIR: dataDir,
      DATA_DIR: path.join(dataDir, 'app'),
      DATABASE_URL: u.toString(),
      LOG_LEVEL: 'warn',
      ...extra,
    };
    delete (env as Record<string, unknown>).TEMPORAL_ADDRESS;
    for (const [k, v] of Object.entries(env)) if (v === undefined) delete (env as Record<string, unknown>)[k];
    const parent = spawn('bash', ['-c', `scripts/start >"$1" 2>&1 & echo $!; wait`, 'parent', logFile], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
    const startPid = await new Promise<number>((resolve) => parent.stdout!.once('data', (d) => resolve(Number(String(d).trim()))));
    const parentDone = new Promise<void>((resolve) => parent.once('exit', () => resolve()));
    const kill = () => {
      for (const p of tree(startPid)) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    };
    const stop = async (signal: 'SIGINT' | 'SIGTERM') => {
      const before = tree(startPid);
      assert.ok(before.some((p) => p.cmd.includes('dist/api/server.js')), 'the API runs below scripts/start');
      assert.ok(before.some((p) => p.cmd.includes('start-dev')), 'the Temporal dev server runs below scripts/start');
      process.kill(startPid, signal);
      await until(`scripts/start exits after ${signal}`, () => !alive(startPid), 90_000, log);
      await parentDone;
      const sids = new Set(before.filter((p) => p.pid === p.sid).map((p) => p.sid));
      const left = [...before.filter((p) => alive(p.pid)), ...allProcs().filter((p) => sids.has(p.sid) && p.state !== 'Z')];
      assert.deepEqual(left, [], `processes left behind after ${signal}`);
      assert.match(log(), new RegExp(`received ${signal}, shutting down`));
    };
    try {
      await until('the API answers /healthz', () => healthy(port), 180_000, log);
    } catch (err) {
      kill();
      throw err;
    }
    return { port, rtmpPort, hooksPort: srtCheckPort, edgePort, startPid, log, stop, kill };
  }

  /** Kills the worker, the live hooks and the live edge in turn: each is started again, the API never stops. */
  async function killChildren(s: Started, name: string) {
    const { port, startPid, log } = s;
    {
      const worker = tree(startPid).find((p) => p.pid === p.sid && p.cmd.includes('dist/workers/main.js'));
      assert.ok(worker, `a worker below scripts/start: ${JSON.stringify(tree(startPid))}`);
      process.kill(-worker.pid, 'SIGKILL');
      await until('the worker is started again', () => /worker started again/.test(log()) && tree(startPid).some((p) => p.pid === p.sid && p.cmd.includes('dist/workers/main.js')), 60_000, log);
      assert.match(log(), new RegExp(`worker \\(pid ${worker.pid}\\) died after \\d+s \\(killed by SIGKILL\\); restarting in 1s`));
      assert.ok(await healthy(port), 'the API kept running while the worker restarted');
      // The restarted worker is given the workflow bundle scripts/start made once, not webpack to run again.
      const again = tree(startPid).find((p) => p.pid === p.sid && p.pid !== worker.pid && p.cmd.includes('dist/workers/main.js'))!;
      const bundleFile = path.join(tmp, name, 'workflow-bundle.js');
      assert.ok(fs.readFileSync(`/proc/${again.pid}/environ`, 'utf8').split('\0').includes(`WORKFLOW_BUNDLE_PATH=${bundleFile}`), 'the worker runs with WORKFLOW_BUNDLE_PATH');
      assert.ok(fs.statSync(bundleFile).size > 0, bundleFile);
      assert.doesNotMatch(log(), /bundling the workflows (failed|instead)/);
      // The live hooks (the key check the edge asks) are a supervised child too: killed, they are started again on their port.
      await until('the live hooks listen', () => listening(s.hooksPort), 60_000, log);
      const hooks = tree(startPid).find((p) => p.pid === p.sid && p.cmd.includes('dist/workers/live-hooks.js'));
      assert.ok(hooks, `the live hooks below scripts/start: ${JSON.stringify(tree(startPid))}`);
      process.kill(-hooks.pid, 'SIGKILL');
      await until('the live hooks are started again', () => /live hooks started again/.test(log()), 60_000, log);
      await until('the live hooks listen again', () => listening(s.hooksPort), 60_000, log);
      assert.ok(await healthy(port), 'the API kept running while the live hooks restarted');
      // So is the live edge (ingest/, vidhost-edge: the only ingest, RTMP on LIVE_RTMP_PORT, SRT,
      // WHIP/WHEP, LL-HLS): killed, it is started again, answers and serves RTMP again.
      const edgeUp = async () => (await fetch(`http://127.0.0.1:${s.edgePort}/healthz`).catch(() => undefined))?.status === 200;
      await until('the live edge answers /healthz', edgeUp, 60_000, log);
      await until('the live edge serves RTMP', () => listening(s.rtmpPort), 60_000, log);
      assert.ok(!tree(startPid).some((p) => p.cmd.includes('node-media-server')), 'no node-media-server below scripts/start');
      const edge = tree(startPid).find((p) => p.pid === p.sid && p.cmd.includes('vidhost-edge'));
      assert.ok(edge, `a live edge below scripts/start: ${JSON.stringify(tree(startPid))}`);
      process.kill(-edge.pid, 'SIGKILL');
      await until('the live edge is started again', () => /live edge started again/.test(log()) && tree(startPid).some((p) => p.pid === p.sid && p.pid !== edge.pid && p.cmd.includes('vidhost-edge')), 60_000, log);
      await until('the restarted live edge answers /healthz', edgeUp, 60_000, log);
      await until('the restarted live edge serves RTMP', () => listening(s.rtmpPort), 60_000, log);
    }
  }

  // One scripts/start for the children it supervises (a run of its own for each cost ~25 s of the
  // suite): the worker, the live hooks and the live edge are killed, then the Temporal dev
  // server under uploads the restarted worker takes to ready. SIGINT ends this test and SIGTERM
  // the Postgres one; stop() asserts that no process is left either way.
  it('restarts a worker, the live hooks, the live edge and its Temporal dev server killed with SIGKILL (same SQLite file; reads answer meanwhile; in-flight uploads reach ready); SIGINT from a non-interactive parent stops every process', async () => {
    const name = 'supervision';
    const s = await startScript(name);
    const { port, startPid, log } = s;
    try {
      await killChildren(s, name);
      const key = /full-access API key \(shown once\): (vhk_\S+)/.exec(log())?.[1];
      assert.ok(key, `scripts/start printed the bootstrap key:\n${log()}`);
      const api = (method: string, p: string, body?: unknown) =>
        fetch(`http://127.0.0.1:${port}${p}`, { method, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const clip = await makeClip({ width: 320, height: 180, seconds: 6 });
      const upload = async (complete: boolean) => {
        const init = await api('POST', '/v1/upload/init', { filename: 'a.mp4', size: fs.statSync(clip).size, content_type: 'video/mp4' });
        const body = await init.json();
        assert.equal(init.status, 201, JSON.stringify(body));
        const put = await putFile(body.upload_url, clip, 'video/mp4', body.upload_headers);
        assert.equal(put.status, 200, await put.text());
        if (complete) assert.equal((await api('POST', '/v1/upload/complete', { video_id: body.video_id })).status, 202);
        return body.video_id as string;
      };
      const inFlight = await upload(true);
      const late = await upload(false);

      const dev = tree(startPid).find((p) => p.pid === p.sid && p.cmd.includes('start-dev'));
      assert.ok(dev, `a Temporal dev server below scripts/start: ${JSON.stringify(tree(startPid))}`);
      const apiPid = tree(startPid).find((p) => p.pid === p.sid && p.cmd.includes('dist/api/server.js'))?.pid;
      process.kill(dev.pid, 'SIGKILL');
      // Reads come from Postgres while Temporal is away.
      for (const id of [inFlight, late]) assert.equal((await api('GET', `/v1/videos/${id}`)).status, 200);
      assert.equal((await api('GET', '/v1/videos?limit=10')).status, 200);
      // Completing needs Temporal: 503 while it restarts, then accepted.
      await until('the late upload is completed', async () => (await api('POST', '/v1/upload/complete', { video_id: late })).status === 202, 120_000, log);
      await until('the Temporal dev server is started again', () => /Temporal dev server started again/.test(log()) && tree(startPid).some((p) => p.pid === p.sid && p.cmd.includes('start-dev') && p.pid !== dev.pid), 60_000, log);
      assert.match(log(), new RegExp(`Temporal dev server \\(pid ${dev.pid}\\) died after \\d+s \\(killed by SIGKILL\\); restarting in 1s`));
      for (const id of [inFlight, late]) {
        await until(`video ${id} reaches ready`, async () => ((await (await api('GET', `/v1/videos/${id}`)).json()) as { status: string }).status === 'ready', 180_000, log);
      }
      assert.ok(alive(startPid), 'scripts/start kept running');
      assert.equal(tree(startPid).find((p) => p.pid === p.sid && p.cmd.includes('dist/api/server.js'))?.pid, apiPid, 'the API was never restarted');
      assert.ok(fs.existsSync(path.join(tmp, name, 'temporal.sqlite')), 'the dev server keeps its SQLite file in the data dir');
      // Quiet start: the transcode queue's worker registers no workflows on purpose; the SDK must not warn about it.
      assert.doesNotMatch(log(), /No workflows registered/);
      await s.stop('SIGINT');
    } finally {
      s.kill();
    }
  });

  it('SIGKILL of the Postgres cluster it created: restarted on the same data directory, the API answers again, SIGTERM stops it too', async () => {
    const s = await startScript('postgres', { DATABASE_URL: undefined, VH_PG_CLUSTER: '1', VH_PG_PORT: String(await freePort()) });
    const { port, startPid, log } = s;
    try {
      const key = /full-access API key \(shown once\): (vhk_\S+)/.exec(log())?.[1];
      assert.ok(key, `scripts/start printed the bootstrap key:\n${log()}`);
      const list = () => fetch(`http://127.0.0.1:${port}/v1/videos`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.status);
      assert.equal(await list(), 200);
      const pg = tree(startPid).find((p) => p.pid === p.sid && /\bpostgres\b/.test(p.cmd) && p.cmd.includes('listen_addresses'));
      assert.ok(pg, `a postgres below scripts/start: ${JSON.stringify(tree(startPid))}`);
      const apiPid = tree(startPid).find((p) => p.pid === p.sid && p.cmd.includes('dist/api/server.js'))?.pid;
      process.kill(pg.pid, 'SIGKILL');
      await until('PostgreSQL is started again', () => /PostgreSQL started again/.test(log()), 90_000, log);
      assert.match(log(), new RegExp(`PostgreSQL \\(pid ${pg.pid}\\) died after \\d+s \\(killed by SIGKILL\\)`));
      await until('the API reads again', async () => (await list()) === 200, 60_000, log);
      assert.equal(tree(startPid).find((p) => p.pid === p.sid && p.cmd.includes('dist/api/server.js'))?.pid, apiPid, 'the API was never restarted');
      const pgNow = tree(startPid).filter((p) => /\bpostgres\b/.test(p.cmd));
      await s.stop('SIGTERM');
      assert.deepEqual(pgNow.filter((p) => alive(p.pid)), [], 'PostgreSQL stopped with scripts/start');
    } finally {
      s.kill();
    }
  });
});
