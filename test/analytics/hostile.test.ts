import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import request from 'supertest';
import { BeaconBuffer, type RawEvent } from '../../lib/analytics/buffer';
import { dayOf } from '../../lib/analytics/viewer';
import { createDb } from '../../lib/db';
import { createLogger } from '../../lib/logger';
import { parseVideoId } from '../../lib/ids';
import { startStack, type Stack } from '../support/stack';

type Ev = Record<string, unknown>;

/**
 * Hostile beacons (issue 33 rows 1 and 8): one beacon holding a NUL or an unpaired surrogate
 * must never stop analytics; forged subjects must not cost a query each.
 */
describe('Viewer analytics: hostile beacons', function () {
  this.timeout(120_000);
  let s: Stack;
  let pub: string;

  const beacon = (body: unknown) => request(s.url).post('/v1/beacons').set('Content-Type', 'text/plain').send(typeof body === 'string' ? body : JSON.stringify(body));
  const event = (over: Ev = {}): Ev => ({ view_id: randomUUID(), seq: 0, subject: pub, event: 'viewstart', position: 0, elapsed_ms: 0, watch_ms: 0, player: { name: 'test', version: '1' }, ...over });
  const stored = async (ids: string[]) => Number((await s.db('analytics_events').whereIn('view_id', ids).count({ n: '*' }))[0].n);

  before(async function () {
    this.timeout(240_000);
    // The default flush interval (1 s): the good beacons must land on their own, no explicit flush.
    s = await startStack({ workers: [] });
    const { body } = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4', visibility: 'public' }).expect(201);
    pub = body.video_id;
  });

  it('stores every good beacon within 60 s when poison ones arrive between them (400 at the door)', async () => {
    const good: string[] = [];
    const send = async () => {
      const e = event();
      good.push(e.view_id as string);
      await beacon(e).expect(204);
    };
    await send();
    // As the reproduction sends them, in each string field; and a raw-JSON escape as well.
    const poisons: Ev[] = [
      event({ event: 'rendition', rendition: 'a\u0000b' }),
      event({ event: 'error', error_code: 'x\ud800' }),
      event({ player: { name: 'p\udc00', version: '1' } }),
      event({ player: { name: 'p', version: '\u0000' } }),
      event({ subject: `${pub}\u0000` }),
    ];
    for (const p of poisons) {
      const res = await beacon([event(), p]);
      assert.equal(res.status, 400, `refused: ${JSON.stringify(p)}`);
      assert.equal(res.body.error.code, 'invalid_beacon');
      assert.match(JSON.stringify(res.body.error.details), /NUL|surrogate/);
      await send();
    }
    const res = await beacon(`[${JSON.stringify(event())},{"view_id":"${randomUUID()}","seq":1,"subject":"${pub}","event":"error","position":0,"error_code":"\\ud800","player":{"name":"p"}}]`);
    assert.equal(res.status, 400);
    // A paired surrogate (an emoji) is fine.
    const emoji = event({ event: 'rendition', rendition: '720p 😀' });
    good.push(emoji.view_id as string);
    await beacon(emoji).expect(204);
    await send();
    const deadline = Date.now() + 60_000;
    while ((await stored(good)) < good.length) {
      assert.ok(Date.now() < deadline, `every good beacon stored within 60 s (${await stored(good)} of ${good.length})`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const { rows } = await s.db.raw(`select rendition from analytics_events where view_id = ?`, [emoji.view_id as string]);
    assert.equal(rows[0].rendition, '720p 😀');
  });

  it('quarantines a batch the database refuses for its content: good rows written, bad rows dropped and counted', async () => {
    const buffer = s.app.hot.beacons;
    const row = (over: Partial<RawEvent> = {}): RawEvent => ({
      day: dayOf(new Date()),
      received_at: new Date().toISOString(),
      view_id: randomUUID(),
      seq: 0,
      subject_id: parseVideoId(pub)!,
      event: 'heartbeat',
      position: 1,
      elapsed_ms: null,
      watch_ms: null,
      bitrate: null,
      rendition: null,
      error_code: null,
      workspace_id: null,
      viewer_hash: null,
      browser: null,
      os: null,
      device: null,
      player: null,
      player_height: null,
      latency_ms: null,
      country: null,
      ...over,
    });
    // Rows that got past the door some other way (an older API process, a future field).
    const rows = [row(), row({ rendition: 'a\u0000b' }), row(), row(), row({ error_code: '\ud800' }), row(), row({ player: 'x\udfff' }), row()];
    const good = rows.filter((r) => !/[\0\p{Cs}]/u.test(`${r.rendition}${r.error_code}${r.player}`)).map((r) => r.view_id);
    const refusedBefore = buffer.refused;
    buffer.push(rows);
    await buffer.flush();
    assert.equal(await stored(good), good.length, 'every good row of the refused batch written');
    assert.equal(buffer.refused - refusedBefore, 3, 'the three bad rows dropped and counted');
    assert.equal(buffer.pending, 0, 'nothing re-queued');
    // The queue keeps moving.
    const next = row();
    buffer.push([next]);
    await buffer.flush();
    assert.equal(await stored([next.view_id]), 1);
  });

  it('writes a batch by COPY, escaping what the text format needs; a batch with a duplicate goes whole through the INSERT, the duplicate dropped (issue 36 item 2)', async () => {
    const buffer = new BeaconBuffer(s.db, createLogger('silent'), { flushMs: 60_000, flushRows: 1000, maxRows: 10_000 });
    const row = (over: Partial<RawEvent> = {}): RawEvent => ({ day: dayOf(new Date()), received_at: new Date().toISOString(), view_id: randomUUID(), seq: 0, subject_id: parseVideoId(pub)!, event: 'heartbeat', position: 1.5, elapsed_ms: 10, watch_ms: 9, bitrate: 2_500_000, rendition: null, error_code: null, workspace_id: null, viewer_hash: null, browser: null, os: null, device: null, player: null, player_height: 720, latency_ms: null, country: null, ...over });
    try {
      const odd = 'tab\there, line\nbreak, cr\r, back\\slash \\N, 😀, \\.';
      const first = [row({ rendition: odd, event: 'viewstart', workspace_id: 'ws_x', viewer_hash: '-9223372036854775808', player: '\\N', country: 'SE' }), row({ position: Number.NaN })];
      buffer.push(first);
      await buffer.flush();
      assert.deepEqual([buffer.copied, buffer.inserted, buffer.written], [1, 0, 2], 'one COPY');
      const { rows } = await s.db.raw(`select rendition, player, viewer_hash::text as h, position, player_height, elapsed_ms, country from analytics_events where view_id = any(?) order by event desc`, [first.map((r) => r.view_id)]);
      assert.deepEqual(rows[0], { rendition: odd, player: '\\N', h: '-9223372036854775808', position: 1.5, player_height: 720, elapsed_ms: 10, country: 'SE' });
      assert.equal(rows[1].position, null, 'a non-finite number is stored as null, as the JSON path stored it');
      // A retried beacon: COPY cannot skip it, so the batch is written by the INSERT … ON CONFLICT.
      const again = [row(), { ...first[0] }, row()];
      buffer.push(again);
      await buffer.flush();
      assert.deepEqual([buffer.copied, buffer.inserted, buffer.written], [1, 1, 5]);
      assert.equal(await stored(again.map((r) => r.view_id)), 3, 'the new rows written, the duplicate once');
      assert.equal(buffer.refused, 0);
    } finally {
      await buffer.close(1);
    }
  });

  it('loses nothing across a Postgres restart: the batch is kept whole and written by the timer once the database is back (issue 36 item 2)', async function () {
    this.timeout(60_000);
    // A TCP proxy in front of the run's Postgres: cutting it is, to the API, the server restarting
    // (every connection dropped, new ones refused), without disturbing the other tests' database.
    const target = new URL(s.config.databaseUrl);
    const sockets = new Set<net.Socket>();
    const serve = (port: number) =>
      new Promise<net.Server>((resolve) => {
        const server = net.createServer((client) => {
          const upstream = net.connect(Number(target.port || 5432), target.hostname);
          for (const sock of [client, upstream]) {
            sockets.add(sock);
            sock.on('close', () => sockets.delete(sock));
            sock.on('error', () => undefined);
          }
          client.pipe(upstream).pipe(client);
        });
        server.listen(port, '127.0.0.1', () => resolve(server));
      });
    let proxy = await serve(0);
    const port = (proxy.address() as net.AddressInfo).port;
    // Refuses new connections and drops the open ones at once. (Waiting for close() before dropping
    // them waited for the pool to let its idle connections go, 30 s, which no restart does.)
    const cut = async () => {
      const closed = new Promise((r) => proxy.close(r));
      for (const sock of sockets) sock.destroy();
      await closed;
    };
    const via = new URL(s.config.databaseUrl);
    via.hostname = '127.0.0.1';
    via.port = String(port);
    const db = createDb(via.toString(), 2);
    const buffer = new BeaconBuffer(db, createLogger('silent'), { flushMs: 200, flushRows: 100, maxRows: 1000 });
    const row = (): RawEvent => ({ day: dayOf(new Date()), received_at: new Date().toISOString(), view_id: randomUUID(), seq: 0, subject_id: parseVideoId(pub)!, event: 'heartbeat', position: 0, elapsed_ms: null, watch_ms: null, bitrate: null, rendition: null, error_code: null, workspace_id: null, viewer_hash: null, browser: null, os: null, device: null, player: null, player_height: null, latency_ms: null, country: null });
    try {
      const first = [row(), row()];
      buffer.push(first);
      await buffer.flush();
      assert.equal(await stored(first.map((r) => r.view_id)), 2, 'written through the proxy');
      await cut();
      const during = Array.from({ length: 50 }, row);
      buffer.push(during);
      await buffer.flush();
      await new Promise((r) => setTimeout(r, 1000)); // several timer flushes fail meanwhile
      assert.equal(buffer.pending, 50, 'kept whole while the database is away');
      assert.equal(buffer.refused, 0, 'a connection failure is not the content’s fault');
      proxy = await serve(port);
      const deadline = Date.now() + 30_000;
      while ((await stored(during.map((r) => r.view_id))) < 50) {
        assert.ok(Date.now() < deadline, `written once the database is back (${buffer.pending} pending)`);
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(buffer.pending, 0);
    } finally {
      await buffer.close(1);
      await db.destroy();
      await cut();
    }
  });

  it('resolves 100 forged subjects in a request with one query per kind, then none (issue 33 row 8), counting nothing', async () => {
    let queries = 0;
    const count = (q: { sql: string }) => {
      if (/\b(videos|live_streams)\b/.test(q.sql)) queries++;
    };
    const hex = () => randomUUID().replace(/-/g, '');
    const view_id = randomUUID();
    const forged = Array.from({ length: 100 }, (_, i) => ({ view_id, seq: i, subject: i % 2 ? `vid_${hex()}` : `ls_${hex()}`, event: 'pause', position: 0, player: { name: 'p' } }));
    assert.ok(JSON.stringify(forged).length < 16 * 1024);
    s.db.on('query', count);
    try {
      await beacon(forged).expect(204);
      assert.ok(queries <= 2, `one lookup for the videos and one for the streams, not one per subject (${queries})`);
      queries = 0;
      await beacon(forged.map((e) => ({ ...e, seq: e.seq + 100 }))).expect(204);
      assert.equal(queries, 0, 'unknown subjects remembered: a repeat costs no query');
      // A real subject among forged ones still counts.
      queries = 0;
      const real = { ...forged[0], view_id: randomUUID(), subject: pub };
      await beacon([...forged.slice(0, 99).map((e) => ({ ...e, seq: e.seq + 200 })), real]).expect(204);
      assert.ok(queries <= 2, `${queries}`);
      await s.app.hot.beacons.flush();
      assert.equal(await stored([real.view_id as string]), 1);
    } finally {
      s.db.off('query', count);
    }
    assert.equal(await stored([view_id]), 0, 'forged subjects counted nowhere');
  });
});
