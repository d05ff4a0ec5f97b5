import assert from 'node:assert/strict';
import { makeClip } from '../support/media';
import { onTeardown } from '../support/hooks';
import { loadConfig } from '../../lib/config';
import { createDb } from '../../lib/db';
import { parseVideoId } from '../../lib/ids';
import { until } from '../support/flow';
import { allReady, assertIntact, callRetrying, duplicateEvents, report, upload, waitMidEncode, waitVideo } from './flow';
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

  // Its APIs and workers would otherwise poll until the whole suite ends.
  after(() => s?.close());

  it('SIGKILL of the dev server mid-encode, restart on the same SQLite file: reads keep answering from Postgres, uploads are still accepted, completes get 503 + Retry-After, every video reaches ready', async () => {
    const clip = await makeClip({ width: 320, height: 180, seconds: 24 });
    const ids = await Promise.all([0, 1, 2].map(() => upload(s, clip)));
    // One more whose upload is complete but not yet confirmed: its completion needs Temporal.
    const late = await upload(s, clip, { complete: false });
    await waitMidEncode(s, ids);

    await temporal.kill('SIGKILL');
    const during = s.seen.length;
    for (const id of ids) {
      const r = await s.call('GET', `/v1/videos/${id}`);
      assert.equal(r.status, 200, `read of ${id} during the outage: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.id, id);
    }
    const list = await s.call('GET', '/v1/videos?limit=10');
    assert.equal(list.status, 200, JSON.stringify(list.body));
    // An upload accepted during the outage: init writes the workflow's start to the outbox and
    // answers; the bytes go to storage; only completing it needs Temporal.
    const accepted = await upload(s, clip, { complete: false });
    const complete = await s.call('POST', '/v1/upload/complete', { video_id: late });
    assert.equal(complete.status, 503, JSON.stringify(complete.body));
    assert.equal(complete.body.error.code, 'temporarily_unavailable');
    assert.match(String(complete.headers.get('retry-after')), /^\d+$/);
    const ready = await fetch(`${s.apis[0].url}/readyz`);
    assert.equal(ready.status, 503);
    assert.equal((await ready.json()).checks.temporal.ok, false);
    const fiveHundreds = s.seen.slice(during).filter((x) => x.status >= 500 && x.status !== 503);
    assert.deepEqual(fiveHundreds, [], 'no 5xx but 503 during the outage');
    const listed = (await s.call('GET', '/v1/videos?limit=100')).body.data as Array<{ id: string; status: string }>;
    assert.equal(listed.length, 5, 'the four videos from before the outage and the one accepted during it');
    assert.equal(listed.find((v) => v.id === accepted)?.status, 'pending_upload');
    const db = createDb(loadConfig(s.env).databaseUrl, 1);
    onTeardown(() => db.destroy());
    const uuid = parseVideoId(accepted)!;
    // The API tried the start and is backing off; the row waits for Temporal.
    await until(async () => ((await db('video_workflow_starts').where({ video_id: uuid }).first('attempts'))?.attempts ?? 0) >= 1, 20_000, 'a failed start attempt recorded', 200);

    await temporal.start();
    // The outbox starts the accepted video's workflow by itself (a sweep after its backoff) ...
    await until(async () => !(await db('video_workflow_starts').where({ video_id: uuid }).first()), 90_000, 'the pending start made once Temporal is back', 200);
    // ... and completing its upload then finds the workflow.
    for (const id of [late, accepted]) {
      const done = await callRetrying(s, 'POST', '/v1/upload/complete', { video_id: id });
      assert.ok([200, 202].includes(done.status), JSON.stringify(done.body));
    }
    for (const id of [...ids, late, accepted]) await waitVideo(s, id, allReady, 180_000);
    for (const id of [...ids, late, accepted]) await assertIntact(s, id);
    assert.ok(
      s.workers.every((w) => w.child.exitCode === null && w.child.signalCode === null),
      `the worker rode out the outage: ${s.workers.map((w) => w.output()).join('\n')}`,
    );
    const fiveXX = s.seen.filter((x) => x.status >= 500 && x.status !== 503).length;
    assert.equal(fiveXX, 0);
    report('Temporal dev server SIGKILL + restart', { inFlight: 6, lost: 0, duplicateEvents: await duplicateEvents(s), fiveXX });
  });
});
