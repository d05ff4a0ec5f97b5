import assert from 'node:assert/strict';
import path from 'node:path';
import madge from 'madge';

const root = path.resolve(__dirname, '..', '..');

/**
 * No import circles in the service's code, type-only imports included: a circle means two rooms
 * each need the other, and the shared part belongs a floor below both (as lib/webhooks/deliveryTypes.ts
 * and api/base.ts now are).
 */
describe('import graph', function () {
  this.timeout(120_000);

  it('has no circles', async () => {
    const graph = await madge(['api', 'lib', 'workflows', 'activities', 'workers', 'bin', 'cli'].map((d) => path.join(root, d)), {
      fileExtensions: ['ts'],
      tsConfig: path.join(root, 'tsconfig.json'),
      baseDir: root,
    });
    assert.deepEqual(graph.circular(), []);
  });
});
