import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '../../lib/db';
import { randomToken } from '../../lib/ids';
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
  let tmp: string;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-start-'));
    await admin.raw(`create database ${dbName}`);
  });
  after(async () => {
    await admin.raw(`drop database if exists ${dbName} with (force)`);
    await admin.destroy();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function run(signal: 'SIGINT' | 'SIGTERM', killWorker: boolean) {
    const [port, temporalPort, uiPort] = [await freePort(), await freePort(), await freePort()];
    const u = new URL(adminUrl);
    u.pathname = `/${dbName}`;
    const dataDir = path.join(tmp, signal);
    const logFile = path.join(tmp, `${signal}.log`);
    const env = {
      ...process.env,
      PORT: String(port),
      TEMPORAL_PORT: String(temporalPort),
      TEMPORAL_UI_PORT: String(uiPort),
      VH_DATA_DIR: dataDir,
      DATA_DIR: path.join(dataDir, 'app'),
      DATABASE_URL: u.toString(),
      LOG_LEVEL: 'warn',
    };
    delete (env as Record<string, unknown>).TEMPORAL_ADDRESS;
    const parent = spawn('bash', ['-c', `scripts/start >"$1" 2>&1 & echo $!; wait`, 'parent', logFile], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const log = () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, 'utf8') : '');
    const startPid = await new Promise<number>((resolve) => parent.stdout!.once('data', (d) => resolve(Number(String(d).trim()))));
    const parentDone = new Promise<void>((resolve) => parent.once('exit', () => resolve()));
    try {
      await until('the API answers /healthz', () => healthy(port), 180_000, log);
      if (killWorker) {
        const worker = tree(startPid).find((p) => p.pid === p.sid && p.cmd.includes('workers/main.ts'));
        assert.ok(worker, `a worker below scripts/start: ${JSON.stringify(tree(startPid))}`);
        process.kill(-worker.pid, 'SIGKILL');
        await until('the worker is started again', () => /worker started again/.test(log()) && tree(startPid).some((p) => p.pid === p.sid && p.cmd.includes('workers/main.ts')), 60_000, log);
        assert.match(log(), new RegExp(`worker \\(pid ${worker.pid}\\) died after \\d+s \\(killed by SIGKILL\\); restarting in 1s`));
        assert.ok(await healthy(port), 'the API kept running while the worker restarted');
      }
      const before = tree(startPid);
      assert.ok(before.some((p) => p.cmd.includes('api/server.ts')), 'the API runs below scripts/start');
      assert.ok(before.some((p) => p.cmd.includes('start-dev')), 'the Temporal dev server runs below scripts/start');
      process.kill(startPid, signal);
      await until(`scripts/start exits after ${signal}`, () => !alive(startPid), 90_000, log);
      await parentDone;
      const sids = new Set(before.filter((p) => p.pid === p.sid).map((p) => p.sid));
      const left = [...before.filter((p) => alive(p.pid)), ...allProcs().filter((p) => sids.has(p.sid) && p.state !== 'Z')];
      assert.deepEqual(left, [], `processes left behind after ${signal}`);
      assert.match(log(), new RegExp(`received ${signal}, shutting down`));
    } finally {
      for (const p of tree(startPid)) {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
  }

  it('restarts a worker killed with SIGKILL; SIGINT from a non-interactive parent stops every process', async () => {
    await run('SIGINT', true);
  });

  it('SIGTERM from a non-interactive parent stops every process', async () => {
    await run('SIGTERM', false);
  });
});
