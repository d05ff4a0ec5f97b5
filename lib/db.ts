import fs from 'node:fs';
import path from 'node:path';
import knex, { Knex } from 'knex';
import pg from 'pg';

// bigint (size_bytes) and numeric come back as strings by default; our values fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export type Db = Knex;

/** `idleTimeoutMillis`: how long an unused pooled connection stays open (tarn's default, 30 s). */
export function createDb(databaseUrl: string, poolMax = 10, opts: { idleTimeoutMillis?: number } = {}): Db {
  return knex({
    client: 'pg',
    connection: { connectionString: databaseUrl, application_name: 'vidhost' },
    pool: { min: 0, max: poolMax, ...(opts.idleTimeoutMillis ? { idleTimeoutMillis: opts.idleTimeoutMillis } : {}) },
  });
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
