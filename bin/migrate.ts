import { loadConfig } from '../lib/config';
import { createDb, migrateLatest, migrationConfig } from '../lib/db';

/** `migrate` (latest) or `migrate down` (roll back the last batch). */
async function main(): Promise<void> {
  const db = createDb(loadConfig().databaseUrl, 2);
  try {
    if (process.argv[2] === 'down') {
      const [, undone] = await db.migrate.rollback(migrationConfig);
      console.log(`rolled back: ${undone.join(', ') || 'nothing'}`);
    } else {
      const applied = await migrateLatest(db);
      console.log(`migrations: ${applied.length ? applied.join(', ') : 'up to date'}`);
    }
  } finally {
    await db.destroy();
  }
}

main().catch((err) => {
  console.error(err.message ?? err);
  process.exitCode = 1;
});
