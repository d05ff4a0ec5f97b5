import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createApp } from '../../api/app';
import { createDb, migrateLatest, migrationConfig } from '../../lib/db';
import { createLogger } from '../../lib/logger';
import { freePort } from '../support/services';
import { testDatabase } from '../support/hooks';
import { startStack, type Stack } from '../support/stack';

async function untilSafelyInsideAMinute(): Promise<void> {
  // The limit counts fixed one-minute windows; don't start a burst a few seconds before one ends.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 200));
}

describe('rate limiting across API processes', function () {
  let a: Stack;
  before(async function () {
    this.timeout(120_000);
    a = await startStack({ workers: [], env: { RATE_LIMIT_PER_MINUTE: '100' } });
  });

  it('100 requests a minute per key, counted across two app instances; 429 with Retry-After after', async function () {
    this.timeout(120_000);
    await untilSafelyInsideAMinute();
    // A second API process on the same database: it shares the budget.
    const b = createApp({ config: a.config, db: a.db, storage: a.storage, temporal: a.temporal, log: createLogger('silent') });
    const server = http.createServer(b.callback());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const bUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const ws = await a.newWorkspace();
    try {
      let last: request.Response | undefined;
      for (let i = 1; i <= 100; i++) {
        last = await request(i % 2 ? a.url : bUrl).get('/v1/videos').set('X-API-Key', ws.readKey);
        assert.equal(last.status, 200, `request ${i}`);
        assert.equal(last.headers['x-ratelimit-limit'], '100');
        // Budgets are leased to processes in blocks (lib/limits/lease.ts), so a process's view of
        // what is left is an estimate; the admission count itself is exact.
        const remaining = Number(last.headers['x-ratelimit-remaining']);
        assert.ok(Number.isInteger(remaining) && remaining >= 0 && remaining <= 100, `remaining ${remaining}`);
      }
      const reset = Number(last!.headers['x-ratelimit-reset']);
      assert.ok(reset > Date.now() / 1000 && reset <= Date.now() / 1000 + 61, `reset ${reset}`);
      const over = await request(bUrl).get('/v1/videos').set('X-API-Key', ws.readKey);
      assert.equal(over.status, 429);
      assert.equal(over.body.error.code, 'rate_limited');
      assert.ok(Number(over.headers['retry-after']) >= 1 && Number(over.headers['retry-after']) <= 60);
      assert.equal(over.headers['x-ratelimit-remaining'], '0');
      // Another key of the same workspace has its own budget.
      assert.equal((await request(a.url).get('/v1/videos').set('X-API-Key', ws.fullKey)).status, 200);
    } finally {
      server.close();
    }
  });
});

describe('health and readiness', function () {
  let s: Stack;
  before(async function () {
    this.timeout(120_000);
    s = await startStack({ workers: [] });
  });

  it('/healthz and /readyz are green when Postgres, Temporal and storage answer', async () => {
    assert.equal((await request(s.url).get('/healthz')).status, 200);
    const r = await request(s.url).get('/readyz');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.checks, { db: { ok: true }, temporal: { ok: true }, storage: { ok: true } });
  });

  it('/readyz is red (503) when Postgres is down', async () => {
    const deadDb = createDb(`postgres://postgres@127.0.0.1:${await freePort()}/nothing`, 1);
    const app = createApp({ config: s.config, db: deadDb, storage: s.storage, temporal: s.temporal, log: createLogger('silent') });
    const r = await request(app.callback()).get('/readyz');
    assert.equal(r.status, 503);
    assert.equal(r.body.checks.db.ok, false);
    assert.equal(r.body.checks.temporal.ok, true);
    await deadDb.destroy();
  });
});

describe('migrations', () => {
  it('go up, all the way down, and up again', async function () {
    this.timeout(60_000);
    const base = await testDatabase();
    const u = new URL(base.url);
    const name = `${base.name}_mig`;
    await base.db.raw(`create database ${name}`);
    u.pathname = `/${name}`;
    const db = createDb(u.toString(), 2);
    try {
      const tables = async () =>
        (await db.raw(`select table_name from information_schema.tables where table_schema = 'public' and table_name not like 'knex%' order by 1`)).rows.map(
          (r: { table_name: string }) => r.table_name,
        );
      await migrateLatest(db);
      const up = await tables();
      assert.ok(up.includes('videos') && up.includes('webhook_deliveries') && up.includes('rate_limits'), up.join());
      await db.migrate.rollback(migrationConfig, true);
      assert.deepEqual(await tables(), []);
      await migrateLatest(db);
      assert.deepEqual(await tables(), up);
    } finally {
      await db.destroy();
      await base.db.raw(`drop database if exists ${name} with (force)`);
    }
  });
});
