import assert from 'node:assert/strict';
import { makeClip } from '../support/media';
import { duplicateEvents, report } from './flow';
import { runLoad } from './load';
import { startFaultStack } from './stack';

/** The in-suite size of the load run; bench/faults.ts runs 100 and compares with 1 API + 1 worker. */
describe('faults: load through 2 APIs and 2 workers', function () {
  this.timeout(600_000);

  it('6 concurrent small uploads (3 per API, more than the 2 × 2 transcode slots of the workers): all ready, exactly one video.uploaded and one video.ready each, no 5xx', async () => {
    const s = await startFaultStack({ apis: 2, workers: 2 });
    const clip = await makeClip({ width: 320, height: 180, seconds: 1 });
    const r = await runLoad(s, clip, 6, 300_000);
    assert.equal(r.fiveXX, 0);
    const dup = await duplicateEvents(s);
    assert.equal(dup, 0);
    report('load: 6 concurrent uploads, 2 APIs + 2 workers', { inFlight: 6, lost: 0, duplicateEvents: dup, fiveXX: r.fiveXX, note: `batch ${r.seconds.toFixed(1)} s, ${r.unavailable} 503s retried` });
    await s.close();
  });
});
