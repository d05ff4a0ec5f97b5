import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { VideoIdKey, VideoStatusKey, WorkspaceIdKey } from '../../workflows/video/defs';
import { TEST_MATCHING } from '../../ops/temporal';
import { findTool, freePort, waitForPort } from '../support/services';

/**
 * Services a fault test may kill and start again, each on its own port and files: unlike the run's
 * shared services (test/support/services.ts), which other tests rely on staying up.
 */
const run = promisify(execFile);

export interface Restartable {
  /** SIGKILL (a crash) by default; resolves once the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start it again on the same port and files; resolves once it answers. */
  start(): Promise<void>;
  /** Stop for good and remove its files. */
  destroy(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** kill/start/destroy for a service that is one child process (`current()`, spawned again by `start`) with its files in `dir`. */
function childControls(current: () => ChildProcess | undefined, start: () => Promise<void>, dir: string): Restartable {
  return {
    async kill(signal = 'SIGKILL') {
      const child = current();
      if (!child) return;
      child.kill(signal);
      await exited(child);
    },
    start,
    async destroy() {
      const child = current();
      if (child) {
        child.kill('SIGKILL');
        await exited(child);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ------------------------------------------------------------------------------------------------
// Temporal: a dev server on a SQLite file, so a restart keeps every workflow.

export interface TemporalServer extends Restartable {
  address: string;
}

async function temporalHealthy(address: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const c = await Connection.connect({ address, connectTimeout: 2000 });
      try {
        await c.workflowService.getSystemInfo({});
        return;
      } finally {
        await c.close();
      }
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`Temporal at ${address} not healthy after ${timeoutMs} ms`, { cause: last });
}

export async function startTemporalServer(): Promise<TemporalServer> {
  const bin = findTool('TEMPORAL_CLI_PATH', 'temporal');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-temporal-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const args = ['server', 'start-dev', '--headless', '--db-filename', path.join(dir, 'temporal.sqlite'), '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error', ...TEST_MATCHING];
  for (const sa of [VideoIdKey, WorkspaceIdKey, VideoStatusKey]) args.push('--search-attribute', `${sa.name}=Keyword`);
  let child: ChildProcess | undefined;
  const log = path.join(dir, 'server.log');
  const start = async () => {
    const out = fs.openSync(log, 'a');
    child = spawn(bin, args, { stdio: ['ignore', out, out] });
    fs.closeSync(out);
    await temporalHealthy(address, 60_000).catch((err) => {
      throw new Error(`${(err as Error).message}; log: ${fs.readFileSync(log, 'utf8').slice(-2000)}`);
    });
  };
  await start();
  return {
    address,
    ...childControls(() => child, start, dir),
  };
}

// ------------------------------------------------------------------------------------------------
// Postgres: a private cluster (the machine's :5432 is shared by everyone and must stay up).

export interface PrivatePostgres extends Restartable {
  /** Admin URL (database `postgres`). */
  url: string;
  port: number;
  /** `pg_ctl stop -m immediate`: the server goes away without a checkpoint, as in a crash. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
}

function pgBin(name: string): string {
  for (const dir of ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin', '/usr/local/bin', '/usr/bin']) {
    const p = path.join(dir, name);
    if (fs.existsSync(p)) return p;
  }
  throw new Error(`${name} not found (Debian: apt-get install postgresql)`);
}

/** initdb and postgres refuse root: run them as `postgres` then (as ops/postgres.ts does). */
const asPgUser = (cmd: string, args: string[]): [string, string[]] =>
  process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-pg-'));
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'postgres.log');
  if (process.getuid?.() === 0) await run('chown', ['postgres', dir]);
  await run(...asPgUser(pgBin('initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync']));
  const port = await freePort();
  const pgCtl = (...args: string[]) => run(...asPgUser(pgBin('pg_ctl'), ['-D', data, ...args]));
  const start = async () => {
    // fsync off: this cluster's data matters only for the length of the test.
    await pgCtl('-l', logFile, '-w', '-t', '60', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`, 'start');
    await waitForPort(port);
  };
  const stop = async (mode: 'fast' | 'immediate' = 'immediate') => {
    await pgCtl('-m', mode, '-w', '-t', '60', 'stop').catch(() => undefined);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop,
    kill: () => stop('immediate'),
    start,
    async destroy() {
      await stop('immediate');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ------------------------------------------------------------------------------------------------
// S3: versitygw on a fixed port and directory, so the objects survive a restart.

export interface RestartableS3 extends Restartable {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export async function startRestartableS3(): Promise<RestartableS3> {
  const bin = findTool('VERSITYGW_PATH', 'versitygw');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-s3-faults-'));
  const port = await freePort();
  const accessKeyId = 'vidhostfaults';
  const secretAccessKey = 'faults-secret-key-0123456789';
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(bin, ['--access', accessKeyId, '--secret', secretAccessKey, '--port', `127.0.0.1:${port}`, 'posix', dir], { stdio: 'ignore' });
    await waitForPort(port);
  };
  await start();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId,
    secretAccessKey,
    ...childControls(() => child, start, dir),
  };
}
