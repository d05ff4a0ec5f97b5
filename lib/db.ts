import path from 'node:path';
import knex, { Knex } from 'knex';
import pg from 'pg';

// bigint (size_bytes) and numeric come back as strings by default; our values fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export type Db = Knex;

export function createDb(databaseUrl: string, poolMax = 10): Db {
  return knex({
    client: 'pg',
    connection: { connectionString: databaseUrl, application_name: 'vidhost' },
    pool: { min: 0, max: poolMax },
  });
}

export const migrationConfig: Knex.MigratorConfig = {
  directory: path.join(__dirname, '..', 'migrations'),
  loadExtensions: ['.ts'],
  tableName: 'knex_migrations',
};

export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = await db.migrate.latest(migrationConfig);
  return applied as string[];
}
