import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { workflowBundle } from '../support/stack';
import { activitiesScheduled, patchIds } from './markers';

const dir = path.join(__dirname, '..', 'fixtures', 'histories');
const histories = () =>
  fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ workflowId: f.replace(/\.json$/, ''), history: historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'))) }));

/**
 * Histories recorded from real runs (npm run record-histories) must replay on today's workflow
 * code: a change that would break running videos fails here, not in production.
 */
describe('workflow replay', function () {
  this.timeout(120_000);

  it('every recorded history replays on the current workflow code', async () => {
    const all = histories();
    assert.ok(all.length >= 4, `recorded histories: ${all.map((h) => h.workflowId)}`);
    const names: string[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, all)) {
      assert.equal(result.error, undefined, `${result.workflowId}: ${result.error}`);
      names.push(result.workflowId);
    }
    assert.deepEqual(names.sort(), all.map((h) => h.workflowId).sort());
  });

  it('the on-request rungs\u2019 fixtures (issue 47) took the new paths', () => {
    const byName = new Map(histories().map((h) => [h.workflowId, h.history]));
    const onRequest = byName.get('jit-on-request-hevc-chunks-idle-delete')!;
    assert.ok(patchIds(onRequest).includes('jit-on-request-rungs') && patchIds(onRequest).includes('ladder-chunk-progress'));
    assert.deepEqual(['prepareOnRequest', 'encodeAlignedChunk', 'finishAligned', 'encodeChunk'].map((t) => activitiesScheduled(onRequest, t)), [1, 3, 1, 0]);
    const packaged = byName.get('jit-passthrough-chunk-progress-idle-delete')!;
    assert.ok(patchIds(packaged).includes('ladder-chunk-progress'));
    assert.equal(activitiesScheduled(packaged, 'encodeChunk'), 3);
  });

  it('the watermark fixture (issue 48) took the watermark-v1 path: the eligible source was never passed through', () => {
    const marked = new Map(histories().map((h) => [h.workflowId, h.history])).get('watermark-upload-ready-idle-delete');
    assert.ok(marked, 'test/fixtures/histories/watermark-upload-ready-idle-delete.json');
    assert.ok(patchIds(marked).includes('watermark-v1') && !patchIds(marked).includes('jit-packaging'), `patches: ${patchIds(marked)}`);
    // On-request rungs (encoded, so marked) instead of the source packaged as it is.
    assert.deepEqual(['prepareOnRequest', 'prepareJit', 'materializeJit'].map((t) => activitiesScheduled(marked, t)), [1, 0, 0]);
  });

  it('a non-deterministic change to the video workflow is caught by the same replay', async () => {
    const broken = await bundleWorkflowCode({
      workflowsPath: require.resolve('./nondeterministic'),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } as never,
    });
    const videos = histories().filter((h) => h.workflowId.startsWith('upload-'));
    let violations = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: broken }, videos)) {
      if (result.error instanceof DeterminismViolationError) violations++;
    }
    assert.equal(violations, videos.length);
  });
});
