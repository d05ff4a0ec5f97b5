import assert from 'node:assert/strict';
import { makeClip } from '../support/media';
import { allReady, assertIntact, duplicateEvents, report, sleep, upload, waitVideo } from './flow';
import { assertDeliveredOnce, startHookReceiver, subscribe } from './hooks';
import { startFaultStack } from './stack';

describe('faults: webhook receiver down, then up', function () {
  this.timeout(300_000);

  it('every event reaches each endpoint exactly once by webhook-id (repeats only as retries of the same id), verified by standardwebhooks', async () => {
    // A schedule that outlasts the outage (~80 s of retries); the receiver is down for less.
    const s = await startFaultStack({ env: { WEBHOOK_RETRY_SCHEDULE: `500ms,1s,2s,${Array(25).fill('3s').join(',')}` } });
    const [steady, flaky] = [await startHookReceiver(), await startHookReceiver()];
    try {
      await subscribe(s, steady);
      await subscribe(s, flaky);
      await flaky.unlisten();
      const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
      const ids = await Promise.all([0, 1, 2].map(() => upload(s, clip)));
      for (const id of ids) await waitVideo(s, id, allReady, 120_000);
      // Down a little longer (connections refused), then answering 503 for a while, then up.
      await sleep(2000);
      await flaky.listen();
      flaky.down = true;
      await sleep(3000);
      flaky.down = false;
      const a = await assertDeliveredOnce(s, steady, ids);
      const b = await assertDeliveredOnce(s, flaky, ids);
      assert.equal(a.events, 6);
      assert.equal(b.events, 6);
      assert.ok(flaky.seen.some((x) => x.answered === 503), 'the receiver answered 503 while down');
      for (const id of ids) await assertIntact(s, id);
      const deliveries = await s
        .db('webhook_deliveries as d')
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .where('e.workspace_id', s.ws.id)
        .select('d.status')
        .count('* as n')
        .groupBy('d.status');
      assert.deepEqual(
        deliveries.map((d) => `${d.status}:${d.n}`),
        ['succeeded:12'],
        'every delivery row succeeded',
      );
      const fiveXX = s.seen.filter((x) => x.status >= 500).length;
      report('webhook receiver down (refused, then 503), then up', { inFlight: 3, lost: 0, duplicateEvents: await duplicateEvents(s), fiveXX, note: `${b.retries} retries with the same webhook-id` });
    } finally {
      await steady.close();
      await flaky.close();
      await s.close();
    }
  });
});
