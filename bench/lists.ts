/**
 * GET /videos at scale: seeds one workspace with --count videos (default 1,000,000) in a database
 * of its own, then times first and deep keyset pages for every filter through the real API
 * (sequential requests, p50/p99), and prints which indexes each plan uses.
 *
 *   npm run bench:lists -- --count 1000000 --requests 200     (DATABASE_URL: any database on the server)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Client } from '@temporalio/client';
import { createApp } from '../api/app';
import { applyListQuery, encodeCursor, listQuery } from '../api/videos/list';
import { loadConfig } from '../lib/config';
import { createDb, migrateLatest } from '../lib/db';
import { createApiKey, createWorkspace } from '../lib/keys';
import { createLogger } from '../lib/logger';
import { createStorage } from '../lib/storage';
import { VIDEO_WITH_RELATIONS } from '../lib/videos/read';
import { seedVideos } from './seed';
import { runMain } from '../test/support/main';

const opt = (n: string, d: number) => (process.argv.includes(`--${n}`) ? Number(process.argv[process.argv.indexOf(`--${n}`) + 1]) : d);
const count = opt('count', 1_000_000);
const requests = opt('requests', 200);

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}
const nodes = (p: PlanNode): PlanNode[] => [p, ...(p.Plans ?? []).flatMap(nodes)];

async function main(): Promise<void> {
  const admin = createDb(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 1);
  const name = 'vidhost_bench_lists';
  await admin.raw(`drop database if exists ${name} with (force)`);
  await admin.raw(`create database ${name}`);
  const url = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/${name}`;
  const config = loadConfig({ ...process.env, DATABASE_URL: url.toString(), RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'warn',
    // Every page from the database: the bench repeats each query, which the read cache would
    // answer from memory after the first time (--cached keeps it on, to see that path).
    READ_CACHE_MS: process.argv.includes('--cached') ? '2000' : '0' });
  const db = createDb(config.databaseUrl, 10);
  await migrateLatest(db);
  const ws = await createWorkspace(db, 'lists', 'business');
  const key = await createApiKey(db, ws.id, 'full');
  let t0 = performance.now();
  const seeded = await seedVideos(db, ws.id, count);
  console.log(`seeded ${count.toLocaleString('en')} videos in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  // A bulk load leaves the visibility map unset and autovacuum about to run over a million rows
  // mid-measurement; a live table has long been vacuumed. Do it now, timed apart.
  const t1 = performance.now();
  await db.raw('vacuum (analyze) videos, video_tags, tags');
  console.log(`vacuum (analyze) in ${((performance.now() - t1) / 1000).toFixed(1)} s`);

  const at = async (fraction: number) => {
    const { rows } = await db.raw(
      `select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as t from videos
        where workspace_id = ? order by created_at desc, id desc offset ? limit 1`,
      [ws.id, Math.floor(count * fraction)],
    );
    return encodeCursor(rows[0].t, rows[0].id);
  };
  const mid = await at(0.5);
  const deep = await at(0.95);
  const rare = (await db.raw(`select substr(md5(${Math.floor(count / 3)}::text), 1, 8) as w`)).rows[0].w;
  const cases: Array<[string, Record<string, string>]> = [
    ['first page', {}],
    ['page at 50%', { cursor: mid }],
    ['page at 95%', { cursor: deep }],
    ['page at 95%, asc', { cursor: deep, order: 'asc' }],
    ['status=failed', { status: 'failed' }],
    ['status=processing at 95%', { status: 'processing', cursor: deep }],
    ['visibility=private at 50%', { visibility: 'private', cursor: mid }],
    ['folder_id', { folder_id: seeded.folders[3] }],
    ['folder_id at 95%', { folder_id: seeded.folders[3], cursor: deep }],
    ['tag', { tag: 'tag3' }],
    ['tag at 95%', { tag: 'tag3', cursor: deep }],
    ['q (rare word)', { q: rare }],
    ['q (rare word, capitals) at 50%', { q: rare.toUpperCase(), cursor: mid }],
    ['q (common word)', { q: 'keynote' }],
    ['q (common word) at 95%', { q: 'keynote', cursor: deep }],
  ];

  const temporal = new Client(); // lazy: the list never talks to Temporal
  const app = createApp({ config, db, storage: createStorage(config), temporal, log: createLogger('warn') });
  const server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/videos`;
  const headers = { Authorization: `Bearer ${key.secret}` };

  console.log(`\n${requests} sequential requests a case, limit=20, through the API (HTTP, auth, rate limit, JSON)`);
  console.log('| Case | p50 | p99 | SQL execution (EXPLAIN ANALYZE, once) | rows | index(es) |');
  console.log('|---|---:|---:|---:|---:|---|');
  for (const [label, params] of cases) {
    const qs = new URLSearchParams({ limit: '20', ...params }).toString();
    const q = applyListQuery(db('videos as v').select(db.raw(VIDEO_WITH_RELATIONS)), listQuery.parse({ limit: '20', ...params }), ws.id).toSQL();
    const explained = (await db.raw(`explain (analyze, format json) ${q.sql}`, q.bindings as never)).rows[0]['QUERY PLAN'][0];
    const plan = nodes(explained.Plan);
    const indexes = [...new Set(plan.filter((n) => n['Relation Name'] === 'videos' || n['Index Name']?.startsWith('video')).map((n) => n['Index Name'] ?? n['Node Type']))];
    const times: number[] = [];
    let rows = 0;
    for (let i = 0; i < requests + 10; i++) {
      t0 = performance.now();
      const r = await fetch(`${base}?${qs}`, { headers });
      const body = (await r.json()) as { data: unknown[] };
      if (r.status !== 200) throw new Error(`${label}: ${r.status} ${JSON.stringify(body)}`);
      if (i >= 10) times.push(performance.now() - t0); // 10 warm-up requests
      rows = body.data.length;
    }
    times.sort((a, b) => a - b);
    const p = (x: number) => times[Math.min(times.length - 1, Math.floor(times.length * x))].toFixed(1);
    console.log(`| ${label} | ${p(0.5)} ms | ${p(0.99)} ms | ${Number(explained['Execution Time']).toFixed(2)} ms | ${rows} | ${indexes.join(', ')} |`);
  }
  server.close();
  await app.close();
  await db.destroy();
  if (!process.argv.includes('--keep')) await admin.raw(`drop database if exists ${name} with (force)`);
  await admin.destroy();
}

runMain(main);
