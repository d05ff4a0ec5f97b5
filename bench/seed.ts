/**
 * Seeds one workspace with N videos (default 1,000,000) in a few set-based statements
 * (generate_series, no round trip a row): ready/failed/processing/pending statuses, three
 * visibilities, 20 folders, 10 tags on a fraction of them, titles from a small vocabulary plus a
 * word of their own (8 hex digits of md5(i)) so `q` has common and rare words, created_at spread over a year with microseconds.
 *
 *   npm run seed:videos -- --count 1000000 [--workspace ws_…]     (DATABASE_URL names the database)
 */
import type { Db } from '../lib/db';
import { newId } from '../lib/ids';

const WORDS = ['holiday', 'lecture', 'product', 'demo', 'interview', 'trailer', 'tutorial', 'keynote', 'launch', 'recap', 'webinar', 'review'];

export interface Seeded {
  folders: string[];
  tags: string[];
}

/** The rare word in seeded video i's title, as SQL computes it. */
export const SEED_WORD_SQL = `substr(md5(i::text), 1, 8)`;

export async function seedVideos(db: Db, workspaceId: string, count: number): Promise<Seeded> {
  const folders = Array.from({ length: 20 }, () => newId('fld'));
  const tags = Array.from({ length: 10 }, () => newId('tag'));
  await db('folders').insert(folders.map((id, i) => ({ id, workspace_id: workspaceId, name: `Folder ${i}` })));
  await db('tags').insert(tags.map((id, i) => ({ id, workspace_id: workspaceId, name: `tag${i}` })));
  await db.raw(
    `insert into videos (id, workspace_id, title, visibility, status, filename, storage_key, folder_id, size_bytes,
                         created_at, updated_at, ready_at, progress)
     select gen_random_uuid(), :ws,
            initcap((:words::text[])[1 + i % 12]) || ' ' || (:words::text[])[1 + (i / 12) % 12] || ' ' || ${SEED_WORD_SQL} || ' #' || i,
            (array['public','unlisted','private'])[1 + i % 3],
            case when i % 50 = 0 then 'failed' when i % 97 = 0 then 'processing' when i % 89 = 0 then 'pending_upload' else 'ready' end,
            'seed.mp4', 'seed/' || i, case when i % 4 = 0 then (:folders::text[])[1 + (i / 4) % 20] end, 1000,
            t, t, t, 100
       from generate_series(1, :count::int) as i,
            lateral (select now() - make_interval(secs => (:count::int - i) * 31.5 + (i % 1000) / 1000.0)) as ts(t)`,
    { ws: workspaceId, words: WORDS, folders, count },
  );
  // Every 10th video has one tag (tagK on videos whose ordinal ends in K·10).
  await db.raw(
    `insert into video_tags (video_id, tag_id)
     select v.id, (:tags::text[])[1 + (row_number() over (order by v.created_at) / 10) % 10]
       from videos v where v.workspace_id = :ws and v.storage_key like 'seed/%0'`,
    { ws: workspaceId, tags },
  );
  await db.raw('analyze videos; analyze video_tags; analyze tags');
  return { folders, tags };
}

async function main(): Promise<void> {
  const { loadConfig } = await import('../lib/config');
  const { createDb, migrateLatest } = await import('../lib/db');
  const { createApiKey, createWorkspace } = await import('../lib/keys');
  const argv = process.argv;
  const opt = (n: string) => (argv.includes(`--${n}`) ? argv[argv.indexOf(`--${n}`) + 1] : undefined);
  const count = Number(opt('count') ?? 1_000_000);
  const config = loadConfig();
  const db = createDb(config.databaseUrl, 2);
  await migrateLatest(db);
  let workspaceId = opt('workspace');
  if (!workspaceId) {
    workspaceId = (await createWorkspace(db, `seeded ${count}`, 'business')).id;
    const key = await createApiKey(db, workspaceId, 'full', 'seed');
    console.log(`workspace ${workspaceId}, full key ${key.secret}`);
  }
  const t0 = Date.now();
  await seedVideos(db, workspaceId, count);
  console.log(`seeded ${count} videos in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  await db.destroy();
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
