import assert from 'node:assert/strict';
import { makeClip } from '../support/media';
import { onTeardown } from '../support/hooks';
import { allReady, assertIntact, callRetrying, duplicateEvents, report, upload, waitVideo } from './flow';
import { startTemporalServer, type TemporalServer } from './services';
import { startFaultStack, type FaultStack } from './stack';

describe('faults: Temporal server restart', function () {
  this.timeout(300_000);
  let temporal: TemporalServer;
  let s: FaultStack;

  before(async () => {
    temporal = await startTemporalServer();
    onTeardown(() => temporal.destroy());
    s = await startFaultStack({ temporalAddress: temporal.address });
  });

  it('SIGKILL of the dev server mid-encode, restart on the same SQLite file: reads keep answering from Postgres, writes get 503 + Retry-After, every video reaches ready', async () => {
    const clip = await makeClip({ width: 320, height: 180, seconds: 12 });
    const ids = await Promise.all([0, 1, 2].map(() => upload(s, clip)));
    // One more whose upload is complete but not yet confirmed: its completion needs Temporal.
    const late = await upload(s, clip, { complete: false });
    await waitVideo(s, ids[0], (v) => v.renditions.some((r: { status: string }) => r.status === 'processing'), 120_000);

    await temporal.kill('SIGKILL');
    const during = s.seen.length;
    for (const id of ids) {
      const r = await s.call('GET', `/v1/videos/${id}`);
      assert.equal(r.status, 200, `read of ${id} during the outage: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.id, id);
    }
    const list = await s.call('GET', '/v1/videos?limit=10');
    assert.equal(list.status, 200, JSON.stringify(list.body));
    const init = await s.call('POST', '/v1/upload/init', { filename: 'x.mp4', size: 1000, content_type: 'video/mp4' });
    assert.equal(init.status, 503, JSON.stringify(init.body));
    assert.equal(init.body.error.code, 'temporarily_unavailable');
    assert.match(String(init.headers.get('retry-after')), /^\d+$/);
    const complete = await s.call('POST', '/v1/upload/complete', { video_id: late });
    assert.equal(complete.status, 503, JSON.stringify(complete.body));
    assert.match(String(complete.headers.get('retry-after')), /^\d+$/);
    const ready = await fetch(`${s.apis[0].url}/readyz`);
    assert.equal(ready.status, 503);
    assert.equal((await ready.json()).checks.temporal.ok, false);
    const fiveHundreds = s.seen.slice(during).filter((x) => x.status >= 500 && x.status !== 503);
    assert.deepEqual(fiveHundreds, [], 'no 5xx but 503 during the outage');
    // The refused init left no video behind.
    const listed = (await s.call('GET', '/v1/videos?limit=100')).body.data as Array<{ id: string }>;
    assert.equal(listed.length, 4, 'only the four videos created before the outage');

    await temporal.start();
    const done = await callRetrying(s, 'POST', '/v1/upload/complete', { video_id: late });
    assert.ok([200, 202].includes(done.status), JSON.stringify(done.body));
    for (const id of [...ids, late]) await waitVideo(s, id, allReady, 180_000);
    for (const id of [...ids, late]) await assertIntact(s, id);
    assert.ok(
      s.workers.every((w) => w.child.exitCode === null && w.child.signalCode === null),
      `the worker rode out the outage: ${s.workers.map((w) => w.output()).join('\n')}`,
    );
    const fiveXX = s.seen.filter((x) => x.status >= 500 && x.status !== 503).length;
    assert.equal(fiveXX, 0);
    report('Temporal dev server SIGKILL + restart', { inFlight: 5, lost: 0, duplicateEvents: await duplicateEvents(s), fiveXX });
  });
});
