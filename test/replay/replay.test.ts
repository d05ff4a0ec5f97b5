import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { workflowBundle } from '../support/stack';

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
