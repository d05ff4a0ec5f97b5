import assert from 'node:assert/strict';
import { makeClip } from '../support/media';
import { onTeardown } from '../support/hooks';
import { allReady, assertIntact, duplicateEvents, report, sleep, upload, waitMidEncode, waitVideo } from './flow';
import { startRestartableS3, type RestartableS3 } from './services';
import { startFaultStack, type FaultStack } from './stack';

describe('faults: storage outage', function () {
  this.timeout(300_000);
  let s3: RestartableS3;
  let s: FaultStack;

  before(async () => {
    s3 = await startRestartableS3();
    onTeardown(() => s3.destroy());
    s = await startFaultStack({ s3 });
  });

  // Its APIs and workers would otherwise poll until the whole suite ends.
  after(() => s?.close());

  it('the S3 server stopped mid-encode and started again on the same port and dir: /readyz says so, activities retry and finish', async () => {
    const clip = await makeClip({ width: 320, height: 180, seconds: 24 });
    const ids = await Promise.all([0, 1, 2].map(() => upload(s, clip)));
    await waitMidEncode(s, ids);

    await s3.kill('SIGKILL');
    const ready = await fetch(`${s.apis[0].url}/readyz`);
    assert.equal(ready.status, 503);
    const body = await ready.json();
    assert.equal(body.checks.storage.ok, false, JSON.stringify(body));
    assert.equal(body.checks.db.ok, true);
    // Reads come from Postgres and Temporal: they keep answering.
    for (const id of ids) assert.equal((await s.call('GET', `/v1/videos/${id}`)).status, 200);
    // An upload needs storage only for its PUT (presigned, straight to S3): init still answers.
    const init = await s.call('POST', '/v1/upload/init', { filename: 'x.mp4', size: 1000, content_type: 'video/mp4' });
    assert.ok(init.status === 201 || init.status === 503, `init while storage is down: ${init.status} ${JSON.stringify(init.body)}`);
    await sleep(5000);

    await s3.start();
    assert.equal((await fetch(`${s.apis[0].url}/readyz`)).status, 200);
    for (const id of ids) await waitVideo(s, id, allReady, 180_000);
    for (const id of ids) await assertIntact(s, id);
    for (const p of [...s.apis, ...s.workers]) assert.equal(p.child.exitCode, null, `${p.name} still runs: ${p.output()}`);
    const fiveXX = s.seen.filter((x) => x.status >= 500 && x.status !== 503).length;
    assert.equal(fiveXX, 0);
    report('S3 (versitygw) SIGKILL + restart', { inFlight: 3, lost: 0, duplicateEvents: await duplicateEvents(s), fiveXX });
  });
});
