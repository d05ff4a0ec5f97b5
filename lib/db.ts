import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import path from 'node:path';
import knex, { Knex } from 'knex';
import pg from 'pg';

// bigint (size_bytes) and numeric come back as strings by default; our values fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export type Db = Knex;

export interface DbOptions {
  /** How long an unused pooled connection stays open (tarn's default, 30 s). */
  idleTimeoutMillis?: number;
  /**
   * Postgres's own `statement_timeout` for every statement on this pool's connections (sent at
   * connect, no round trip a query): past it the server cancels the statement (SQLSTATE 57014),
   * whoever is waiting. The API sets it (API_STATEMENT_TIMEOUT_MS); 0 or unset: no bound.
   */
  statementTimeoutMs?: number;
}

/**
 * The Postgres backends a scope's queries are running on (issue 45: a request that has gone away
 * must not leave its query running). `runCancellable` gives a scope; every query started inside it
 * registers its connection's backend pid while it runs; `cancelScope` asks Postgres to cancel
 * those still running.
 */
const scopes = new AsyncLocalStorage<Set<number>>();

export function runCancellable<T>(fn: () => Promise<T>): { result: Promise<T>; running: Set<number> } {
  const running = new Set<number>();
  return { result: scopes.run(running, fn), running };
}

/**
 * Cancels the statements still running in a scope (`pg_cancel_backend`, sent outside the scope
 * on another pooled connection). A backend is in the set only while its query runs, so this does
 * not reach a connection already handed back to the pool (short of the cancel crossing the query's
 * own end on the wire, as with any Postgres cancel request).
 */
export async function cancelScope(db: Db, running: Set<number>): Promise<number> {
  const pids = [...running];
  if (!pids.length) return 0;
  const { rows } = await scopes.exit(() => db.raw(`select count(*) filter (where pg_cancel_backend(pid))::int as n from unnest(?::int[]) as pid`, [pids]));
  return rows[0].n;
}

/** Runs `fn` outside any cancellable scope: work a request starts but does not own (a buffer's flush). */
export const detached = <T>(fn: () => T): T => scopes.exit(fn);

type PgConnection = { processID?: number };

export function createDb(databaseUrl: string, poolMax = 10, opts: DbOptions = {}): Db {
  const db = knex({
    client: 'pg',
    connection: {
      connectionString: databaseUrl,
      application_name: 'vidhost',
      ...(opts.statementTimeoutMs ? { statement_timeout: opts.statementTimeoutMs } : {}),
    },
    pool: { min: 0, max: poolMax, ...(opts.idleTimeoutMillis ? { idleTimeoutMillis: opts.idleTimeoutMillis } : {}) },
  });
  // Every query goes through the dialect's _query(connection, …): inside a cancellable scope its
  // backend is registered for as long as it runs.
  const client = db.client as { _query(connection: PgConnection, obj: unknown): Promise<unknown> };
  const query = client._query.bind(client);
  client._query = (connection, obj) => {
    const scope = scopes.getStore();
    const pid = connection?.processID;
    if (!scope || pid === undefined) return query(connection, obj);
    scope.add(pid);
    return query(connection, obj).finally(() => scope.delete(pid));
  };
  return db;
}

/**
 * Migrations are recorded under their `.ts` names whether they run from the sources (tsx) or from
 * the compiled `.js` in dist/ (npm run build): knex would otherwise take the compiled files for
 * new migrations and the recorded ones for missing ("the migration directory is corrupt").
 */
export class MigrationSource implements Knex.MigrationSource<string> {
  constructor(private readonly dir: string) {}

  async getMigrations(): Promise<string[]> {
    const stems = fs
      .readdirSync(this.dir)
      .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts'))
      .map((f) => f.replace(/\.(ts|js)$/, ''));
    return [...new Set(stems)].sort();
  }

  getMigrationName(stem: string): string {
    return `${stem}.ts`;
  }

  async getMigration(stem: string): Promise<Knex.Migration> {
    const js = path.join(this.dir, `${stem}.js`);
    return require(fs.existsSync(js) ? js : path.join(this.dir, `${stem}.ts`));
  }
}

export const migrationConfig: Knex.MigratorConfig = {
  migrationSource: new MigrationSource(path.join(__dirname, '..', 'migrations')),
  tableName: 'knex_migrations',
};

export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = await db.migrate.latest(migrationConfig);
  return applied as string[];
}
