import assert from 'node:assert/strict';
import pg from 'pg';
import { createLogger } from '../../lib/logger';
import { listen } from '../../lib/pg/listen';
import { until } from '../support/flow';
import { testDatabase } from '../support/hooks';

describe('the shared LISTEN connection (lib/pg/listen)', () => {
  it('issues its LISTENs one at a time, and every channel hears its own notifications', async () => {
    const t = await testDatabase();
    // A URL of its own, so this test gets a fresh shared connection rather than the run's.
    const url = `${t.url}${t.url.includes('?') ? '&' : '?'}application_name=vidhost-listen-test`;
    // pg deprecates (and pg@9 removes) handing a client a query while one runs; it warns only
    // once per process, so the test counts LISTENs in flight on each client itself.
    const query = pg.Client.prototype.query;
    const inFlight = new Map<pg.Client, number>();
    let most = 0;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      if (typeof args[0] !== 'string' || !args[0].startsWith('LISTEN')) return (query as (...a: unknown[]) => unknown).apply(this, args);
      const n = (inFlight.get(this) ?? 0) + 1;
      inFlight.set(this, n);
      most = Math.max(most, n);
      const r = (query as (...a: unknown[]) => unknown).apply(this, args);
      const done = () => inFlight.set(this, (inFlight.get(this) ?? 1) - 1);
      if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).then(done, done);
      return r;
    } as typeof query;

    const channels = ['vh_listen_a', 'vh_listen_b', 'vh_listen_c', 'vh_listen_d'];
    const heard = new Map<string, string[]>();
    const log = createLogger('silent');
    // All four subscribe before the connection is up, so all four LISTENs are due at once.
    const listeners = channels.map((ch) => listen(url, ch, { onNotify: (p) => heard.set(ch, [...(heard.get(ch) ?? []), p]), onReset() {} }, log));
    try {
      await until(async () => listeners.every((l) => l.connected), 10_000, 'every channel listening');
      for (const ch of channels) await t.db.raw('select pg_notify(?, ?)', [ch, `to ${ch}`]);
      await until(async () => channels.every((ch) => heard.get(ch)?.length === 1), 5_000, 'each channel hearing one notification');
      for (const ch of channels) assert.deepEqual(heard.get(ch), [`to ${ch}`]);
      assert.equal(most, 1, 'the LISTEN client was handed a query while another was running');
    } finally {
      pg.Client.prototype.query = query;
      await Promise.all(listeners.map((l) => l.close()));
    }
  });
});
