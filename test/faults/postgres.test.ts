import assert from 'node:assert/strict';
import { makeClip } from '../support/media';
import { onTeardown } from '../support/hooks';
import { allReady, assertIntact, duplicateEvents, report, sleep, upload, waitMidEncode, waitVideo } from './flow';
import { startPrivatePostgres, type PrivatePostgres } from './services';
import { startFaultStack, type FaultStack } from './stack';

describe('faults: Postgres restart', function () {
  this.timeout(300_000);
  let pg: PrivatePostgres;
  let s: FaultStack;

  before(async () => {
    pg = await startPrivatePostgres();
    onTeardown(() => pg.destroy());
    s = await startFaultStack({ postgresAdminUrl: pg.url });
  });

  // Its APIs and workers would otherwise poll until the whole suite ends.
  after(() => s?.close());

  it('a private cluster stopped mid-flight and started again: 503 + Retry-After meanwhile, no 500, every video reaches ready', async () => {
    const clip = await makeClip({ width: 320, height: 180, seconds: 24 });
    const ids = await Promise.all([0, 1, 2].map(() => upload(s, clip)));
    await waitMidEncode(s, ids);

    // fast: open sessions are ended with 57P01 (admin shutdown), new ones refused.
    await pg.stop('fast');
    const during = s.seen.length;
    const outageStarted = Date.now();
    // Reads and writes for a few seconds, while the workers' activities fail and back off.
    while (Date.now() - outageStarted < 6000) {
      const r = await s.call('GET', `/v1/videos/${ids[1]}`);
      assert.equal(r.status, 503, `read during the outage: ${r.status} ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.code, 'temporarily_unavailable');
      assert.match(String(r.headers.get('retry-after')), /^\d+$/);
      const w = await s.call('POST', '/v1/upload/init', { filename: 'x.mp4', size: 1000, content_type: 'video/mp4' });
      assert.equal(w.status, 503, `write during the outage: ${w.status} ${JSON.stringify(w.body)}`);
      assert.match(String(w.headers.get('retry-after')), /^\d+$/);
      await sleep(500);
    }
    const health = await fetch(`${s.apis[0].url}/readyz`);
    assert.equal(health.status, 503);
    assert.equal((await health.json()).checks.db.ok, false);

    await pg.start();
    for (const id of ids) await waitVideo(s, id, allReady, 180_000);
    for (const id of ids) await assertIntact(s, id);
    // The processes rode it out: none exited.
    for (const p of [...s.apis, ...s.workers]) assert.equal(p.child.exitCode, null, `${p.name} still runs: ${p.output()}`);
    const fiveXX = s.seen.filter((x) => x.status >= 500 && x.status !== 503);
    assert.deepEqual(fiveXX, [], 'no 5xx but 503');
    assert.ok(s.seen.slice(during).some((x) => x.status === 503));
    // A new upload after the outage goes through too (a short clip: the 24 s are for being caught mid-encode).
    const after = await upload(s, await makeClip({ width: 320, height: 180, seconds: 2 }));
    await waitVideo(s, after, allReady, 120_000);
    await assertIntact(s, after);
    report('Postgres stop (fast) + start', { inFlight: 3, lost: 0, duplicateEvents: await duplicateEvents(s), fiveXX: fiveXX.length });
  });
});
