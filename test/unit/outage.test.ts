import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import Koa from 'koa';
import request from 'supertest';
import { DatabaseError } from 'pg';
import { errorMiddleware } from '../../api/middleware/errors';
import { badRequest } from '../../api/errors';
import { loadConfig } from '../../lib/config';
import { createDb } from '../../lib/db';
import { outageOf } from '../../lib/outage';
import { S3Storage } from '../../lib/storage/s3';
import { createTemporalClient } from '../../lib/temporal';
import { freePort } from '../support/services';

/** The errors each client really throws when its server is not there (a port nobody listens on). */
describe('outageOf', () => {
  let closedPort: number;
  before(async () => {
    closedPort = await freePort();
  });

  it('knex/pg: a refused connection is a database outage', async () => {
    const db = createDb(`postgres://postgres@127.0.0.1:${closedPort}/x`, 1);
    const err = await db.raw('select 1').catch((e: unknown) => e);
    await db.destroy();
    assert.equal(outageOf(err), 'database');
  });

  it('pg: a server shutting down (57P01, 57P03, class 08) is a database outage; a constraint violation is not', () => {
    const pgError = (code: string) => Object.assign(new DatabaseError('x', 1, 'error'), { code });
    assert.equal(outageOf(pgError('57P01')), 'database');
    assert.equal(outageOf(pgError('57P03')), 'database');
    assert.equal(outageOf(pgError('08006')), 'database');
    assert.equal(outageOf(new Error('Connection terminated unexpectedly')), 'database');
    assert.equal(outageOf(pgError('23505')), undefined);
  });

  it("Temporal: an unreachable server is a Temporal outage (after the API client's bounded retries)", async function () {
    this.timeout(30_000);
    const client = createTemporalClient(loadConfig({ TEMPORAL_ADDRESS: `127.0.0.1:${closedPort}` }));
    const err = await client.workflow.start('x', { taskQueue: 'q', workflowId: 'w' }).catch((e: unknown) => e);
    assert.equal(outageOf(err), 'temporal');
  });

  it('S3: a refused connection is a storage outage', async function () {
    this.timeout(30_000);
    const s3 = new S3Storage({ endpoint: `http://127.0.0.1:${closedPort}`, bucket: 'b', region: 'us-east-1', accessKeyId: 'a', secretAccessKey: 'b', forcePathStyle: true });
    const err = await s3.head('a/b').catch((e: unknown) => e);
    assert.equal(outageOf(err), 'storage');
  });

  it('S3: a server that accepts and never answers, or stops half way through a body, fails within the idle bound as a storage outage', async function () {
    this.timeout(30_000);
    // Accepts every connection; answers a GET of `half` with headers and 10 of 1,000 bytes, anything else never.
    const sockets = new Set<net.Socket>();
    const mute = net.createServer((sock) => {
      sockets.add(sock);
      sock.on('error', () => {});
      sock.once('data', (d) => {
        if (/^GET \/b\/half/.test(d.toString())) sock.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: video/mp2t\r\n\r\n0123456789');
      });
    });
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
    try {
      const port = (mute.address() as net.AddressInfo).port;
      const s3 = new S3Storage({ endpoint: `http://127.0.0.1:${port}`, bucket: 'b', region: 'us-east-1', accessKeyId: 'a', secretAccessKey: 'b', forcePathStyle: true, idleTimeoutMs: 300 });
      const t0 = Date.now();
      const err = await s3.head('a/b').catch((e: unknown) => e);
      assert.ok(err instanceof Error, `head settled with ${String(err)}`);
      assert.equal(outageOf(err), 'storage', String(err));
      assert.ok(Date.now() - t0 < 10_000, `${Date.now() - t0} ms`);
      const obj = await s3.get('half');
      assert.ok(obj, 'the half body opened');
      const read = await new Promise<unknown>((resolve) => {
        obj.body.on('error', resolve).on('end', () => resolve('end')).resume();
      });
      assert.ok(read instanceof Error, `the stalled body ended with ${String(read)}`);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((r) => mute.close(r));
    }
  });

  it('anything else is not an outage', () => {
    assert.equal(outageOf(new TypeError('x is undefined')), undefined);
    assert.equal(outageOf(badRequest('bad', 'bad')), undefined);
    assert.equal(outageOf(undefined), undefined);
  });
});

describe('error middleware and outages', () => {
  const serve = (err: unknown) => {
    const app = new Koa();
    app.use(errorMiddleware);
    app.use(() => {
      throw err;
    });
    return http.createServer(app.callback());
  };

  it('answers 503 with Retry-After for an outage, 500 for a bug', async () => {
    const down = serve(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    const r = await request(down).get('/');
    assert.equal(r.status, 503);
    assert.equal(r.body.error.code, 'temporarily_unavailable');
    assert.match(r.headers['retry-after'], /^\d+$/);
    const bug = await request(serve(new TypeError('oops'))).get('/');
    assert.equal(bug.status, 500);
    assert.equal(bug.headers['retry-after'], undefined);
  });
});
