import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { createDb, migrateLatest, type Db } from '../../lib/db';
import { randomToken } from '../../lib/ids';
import { VideoIdKey, VideoStatusKey, WorkspaceIdKey } from '../../workflows/video/defs';
import { TEST_MATCHING } from '../../ops/temporal';

/**
 * The real components the integration tests run against, started once per mocha run and only
 * when a test asks for them: a Temporal dev server, a fresh Postgres database, an S3 server.
 */
const toolsDir = process.env.VH_TOOLS_DIR ?? path.join(os.homedir(), '.cache', 'vidhost', 'tools');

export function findTool(envVar: string, name: string): string {
  const candidates = [process.env[envVar], path.join(toolsDir, 'bin', name), ...(process.env.PATH ?? '').split(':').map((d) => path.join(d, name))];
  for (const c of candidates) if (c && fs.existsSync(c)) return c;
  throw new Error(`${name} not found: run ./scripts/test (it builds it) or set ${envVar}`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export async function waitForPort(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

export interface S3Server {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  dir: string;
  stop(): Promise<void>;
}

export async function startS3Server(): Promise<S3Server> {
  const bin = findTool('VERSITYGW_PATH', 'versitygw');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-s3-'));
  const port = await freePort();
  const accessKeyId = 'vidhosttest';
  const secretAccessKey = randomToken(18);
  const child: ChildProcess = spawn(bin, ['--access', accessKeyId, '--secret', secretAccessKey, '--port', `127.0.0.1:${port}`, 'posix', dir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += d));
  try {
    await waitForPort(port);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`versitygw did not start: ${stderr}`, { cause: err });
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    accessKeyId,
    secretAccessKey,
    dir,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startTemporal(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: findTool('TEMPORAL_CLI_PATH', 'temporal') },
      ip: '127.0.0.1',
      searchAttributes: [VideoIdKey, WorkspaceIdKey, VideoStatusKey],
      // One task-queue partition, priority and fairness, as scripts/start's own dev server (ops/temporal.ts).
      extraArgs: ['--log-level', 'error', ...TEST_MATCHING],
    },
  });
}

export interface TestDatabase {
  url: string;
  name: string;
  db: Db;
  drop(): Promise<void>;
}

/** A database of its own for this run, migrated, dropped at the end. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const name = `vidhost_test_${process.pid}_${randomToken(4).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
  const admin = createDb(adminUrl, 1);
  await admin.raw(`create database ${name}`);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const db = createDb(u.toString(), 20, { idleTimeoutMillis: 2000 });
  await migrateLatest(db);
  return {
    url: u.toString(),
    name,
    db,
    async drop() {
      await db.destroy();
      await admin.raw(`drop database if exists ${name} with (force)`);
      await admin.destroy();
    },
  };
}
