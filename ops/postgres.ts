import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { die, say } from './log';
import { type Child, isExecutable, portOpen, run, sleep, spawnChild, tail, which } from './proc';
import { aptInstall, isRoot } from './apt';
import type { ChildSpec } from './supervisor';

/**
 * PostgreSQL for scripts/start and scripts/test: DATABASE_URL as given; else the server on
 * 127.0.0.1:5432 (database created if missing); else a cluster of our own under <data>/pg on
 * VH_PG_PORT (54329), made with initdb and run as a child `postgres` process, so scripts/start
 * supervises it like the API and restarts it if it dies. VH_PG_CLUSTER=1 skips :5432.
 */

export interface PgResult {
  url: string;
  /** Set when the cluster is ours and not running yet: start it (supervised, or for the test run). */
  cluster?: ChildSpec;
  /** Our cluster was already running (another scripts/start or VH_KEEP_PG). */
  reused?: boolean;
}

export async function pgReady(host: string, port: number): Promise<boolean> {
  const isready = pgBin('pg_isready');
  if (!isready) return portOpen(host, port);
  return (await run(isready, ['-q', '-h', host, '-p', String(port), '-t', '3'])).code === 0;
}

/** Creates `db` (as user postgres, no password) when missing; a concurrent run may create it first. */
export async function ensureDb(host: string, port: number, db: string): Promise<void> {
  const c = new Client({ host, port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    const r = await c.query('select 1 from pg_database where datname = $1', [db]);
    if (r.rowCount) return;
    say(`creating database ${db} on ${host}:${port}`);
    await c.query(`create database "${db.replace(/"/g, '""')}"`).catch((err: { code?: string }) => {
      if (err.code !== '42P04') throw err;
    });
  } finally {
    await c.end();
  }
}

/** A server binary (initdb, postgres, pg_isready): PATH, the usual prefixes, else Debian's highest major. */
export function pgBin(name: string): string | undefined {
  const onPath = which(name);
  if (onPath) return onPath;
  const fixed = ['/usr/local/bin', '/usr/local/pgsql/bin', '/opt/homebrew/bin'].map((d) => path.join(d, name)).find(isExecutable);
  if (fixed) return fixed;
  const debian = '/usr/lib/postgresql';
  const majors = fs.existsSync(debian) ? fs.readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  return majors.map((v) => path.join(debian, v, 'bin', name)).find(isExecutable);
}

interface OsUser {
  name: string;
  uid: number;
  gid: number;
}

/** initdb and postgres refuse root: as root, run them as `postgres` (or a system user we create). */
async function clusterOwner(): Promise<OsUser | undefined> {
  if (!isRoot()) return undefined;
  const id = async (name: string, flag: string) => {
    const r = await run('id', [flag, name]);
    return r.code === 0 ? Number(r.stdout.trim()) : undefined;
  };
  let name = 'postgres';
  if ((await id(name, '-u')) === undefined) {
    name = 'vidhost-pg';
    if ((await id(name, '-u')) === undefined) {
      say('creating system user vidhost-pg to own the local PostgreSQL cluster');
      const r = await run('useradd', ['--system', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', name]);
      if (r.code !== 0) die(`could not create a system user for PostgreSQL (initdb refuses to run as root); set DATABASE_URL instead\n${r.stderr}`);
    }
  }
  return { name, uid: (await id(name, '-u'))!, gid: (await id(name, '-g'))! };
}

/** The cluster's directory: <data>/pg, or /var/tmp when the cluster's owner can't reach <data> (e.g. under /root). */
async function clusterBase(dataDir: string, owner?: OsUser): Promise<string> {
  let base = path.join(dataDir, 'pg');
  fs.mkdirSync(base, { recursive: true });
  if (!owner) return base;
  fs.chownSync(base, owner.uid, owner.gid);
  if ((await run('test', ['-w', base], { uid: owner.uid, gid: owner.gid })).code !== 0) {
    base = `/var/tmp/vidhost-pg-${Buffer.from(dataDir).toString('base64url').slice(-24)}`;
    say(`user ${owner.name} can't access ${dataDir}; keeping the cluster in ${base} instead`);
    fs.mkdirSync(base, { recursive: true, mode: 0o700 });
    fs.chownSync(base, owner.uid, owner.gid);
  }
  return base;
}

/** The `postgres` command line of our cluster (TCP on loopback; a socket only when its path fits). */
export function postgresArgs(pgdata: string, port: number, sockDir: string): string[] {
  return ['-D', pgdata, '-p', String(port), '-k', sockDir.length + 16 <= 100 ? sockDir : '', '-c', 'listen_addresses=127.0.0.1'];
}

async function localCluster(db: string, dataDir: string, port: number): Promise<PgResult> {
  const url = `postgres://postgres@127.0.0.1:${port}/${db}`;
  if (await pgReady('127.0.0.1', port)) {
    say(`reusing PostgreSQL already running on 127.0.0.1:${port}`);
    await ensureDb('127.0.0.1', port, db);
    return { url, reused: true };
  }
  if (await portOpen('127.0.0.1', port)) die(`port ${port} is in use by something that isn't an accepting PostgreSQL; set VH_PG_PORT or DATABASE_URL`);
  // A fresh Debian machine as root: install the server (its own service, if it starts one, is found on :5432 next time).
  if (!pgBin('initdb') || !pgBin('postgres')) await aptInstall(['postgresql'], path.join(dataDir, 'logs', 'apt.log'));
  const initdb = pgBin('initdb');
  const postgres = pgBin('postgres');
  if (!initdb || !postgres) {
    die(`no PostgreSQL server found: nothing answers on 127.0.0.1:5432 and initdb/postgres aren't installed.
  Debian/Ubuntu: sudo apt-get install postgresql   (macOS: brew install postgresql@16)
  or point DATABASE_URL at an existing server (postgres://user:pass@host:5432/db).`);
  }
  const owner = await clusterOwner();
  const base = await clusterBase(dataDir, owner);
  const pgdata = path.join(base, 'data');
  const sock = path.join(base, 'run');
  const as = { uid: owner?.uid, gid: owner?.gid, cwd: base };
  await run('mkdir', ['-p', pgdata, sock], as);
  if (!fs.existsSync(path.join(pgdata, 'PG_VERSION'))) {
    const log = path.join(dataDir, 'logs', 'initdb.log');
    say(`initializing a PostgreSQL cluster in ${pgdata} (${(await run(initdb, ['--version'])).stdout.trim()})`);
    const r = await run(initdb, ['-D', pgdata, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale'], { ...as, logFile: log });
    if (r.code !== 0) die(`${tail(log)}\ninitdb failed`);
  }
  const log = path.join(base, 'postgres.log');
  const cluster: ChildSpec = {
    name: 'PostgreSQL',
    stopSignal: 'SIGINT', // fast shutdown: clients are stopped already
    stopTimeoutMs: 30_000,
    async start(): Promise<Child> {
      say(`starting PostgreSQL on 127.0.0.1:${port} (log: ${log})`);
      const child = spawnChild(postgres, postgresArgs(pgdata, port, sock), { ...as, logFile: log });
      let exited = false;
      void child.exited.then(() => (exited = true));
      const deadline = Date.now() + 60_000;
      while (!(await pgReady('127.0.0.1', port))) {
        if (exited) throw new Error(`PostgreSQL exited during startup\n${tail(log)}`);
        if (Date.now() > deadline) {
          child.signal('SIGKILL', true);
          throw new Error(`PostgreSQL didn't accept connections within 60s\n${tail(log)}`);
        }
        await sleep(200);
      }
      await ensureDb('127.0.0.1', port, db);
      return child;
    },
  };
  return { url, cluster };
}

export async function resolvePostgres(db: string, dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<PgResult> {
  if (env.DATABASE_URL) {
    say('using DATABASE_URL from the environment');
    return { url: env.DATABASE_URL };
  }
  if (env.VH_PG_CLUSTER !== '1' && (await pgReady('127.0.0.1', 5432))) {
    await ensureDb('127.0.0.1', 5432, db).catch((err: Error) =>
      die(`PostgreSQL on 127.0.0.1:5432 doesn't accept user postgres without a password (${err.message}).
  Set DATABASE_URL=postgres://user:password@127.0.0.1:5432/${db} (the database must exist).`),
    );
    say(`using PostgreSQL on 127.0.0.1:5432 (database ${db})`);
    return { url: `postgres://postgres@127.0.0.1:5432/${db}` };
  }
  return localCluster(db, dataDir, Number(env.VH_PG_PORT || 54329));
}
