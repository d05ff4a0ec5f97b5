// The locks that make a just-in-time segment once across API processes (lib/playback/jit.ts).
//
// A session-level Postgres advisory lock per segment, held on a connection of a small pool of
// its own, never on the API's query pool and never inside a transaction: a cut holds its lock
// for the whole ffmpeg run (up to JIT_CUT_TIMEOUT_MS), and holding a transaction and a pooled
// connection that long (as the cutter did until issue 45) let 4 cuts take 4 of the API's 10
// connections, so every other query of that process waited behind the encodes. A process that
// dies drops its connections, and with them its locks: another process waiting on one takes over.
import pg from 'pg';
import type { Db } from '../db';

export interface SegmentLocks {
  /** Waits for the segment's lock (at most the lock timeout: then it throws). */
  lock(key: string): Promise<void>;
  /** Takes the segment's lock if nobody holds it. */
  tryLock(key: string): Promise<boolean>;
  unlock(key: string): Promise<void>;
  /** Releases every lock still held and gives the connection back. */
  release(): Promise<void>;
}

export interface LockPool {
  open(): Promise<SegmentLocks>;
  close(): Promise<void>;
}

const lockId = (key: string) => `jit:${key}`;

/**
 * A pool of at most `size` connections for segment locks (one per concurrent cut: the cut queue's
 * concurrency), from the same database settings as `db`. Idle connections close after 10 s.
 */
export function createLockPool(db: Db, size: number, lockTimeoutMs: number): LockPool {
  const connection = (db.client as { config: { connection?: string | pg.ClientConfig } }).config.connection;
  const settings: pg.PoolConfig = typeof connection === 'string' ? { connectionString: connection } : { ...(connection ?? {}) };
  const pool = new pg.Pool({ ...settings, application_name: 'vidhost-jit-locks', max: size, idleTimeoutMillis: 10_000, allowExitOnIdle: true });
  // A connection that breaks while idle must not crash the process; the next open() makes another.
  pool.on('error', () => undefined);
  const timeout = String(Math.max(1, Math.floor(lockTimeoutMs)));
  return {
    async open() {
      const client = await pool.connect();
      let broken: Error | undefined;
      // The server may end the connection while a cut holds it (a restart, an administrator): an
      // 'error' with no listener would take the API down. The lock went with it; the cut goes on.
      const onError = (err: Error) => (broken ??= err);
      client.on('error', onError);
      try {
        await client.query("select set_config('lock_timeout', $1, false)", [timeout]);
      } catch (err) {
        client.off('error', onError);
        client.release(err as Error);
        throw err;
      }
      const run = async <T>(fn: () => Promise<T>): Promise<T> => {
        try {
          return await fn();
        } catch (err) {
          broken ??= err as Error;
          throw err;
        }
      };
      return {
        lock: (key) => run(async () => void (await client.query('select pg_advisory_lock(hashtext($1))', [lockId(key)]))),
        tryLock: (key) => run(async () => (await client.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtext($1)) as ok', [lockId(key)])).rows[0].ok),
        unlock: (key) => run(async () => void (await client.query('select pg_advisory_unlock(hashtext($1))', [lockId(key)]))),
        async release() {
          // A connection that failed (or whose lock wait timed out mid-statement) is closed, which drops its locks.
          if (!broken) await client.query('select pg_advisory_unlock_all()').catch((err: Error) => (broken = err));
          client.off('error', onError);
          client.release(broken);
        },
      };
    },
    close: () => pool.end(),
  };
}
