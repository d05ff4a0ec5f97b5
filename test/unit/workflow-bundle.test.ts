import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadWorkflowBundle } from '../../workers/workflow-bundle';

/** What bundleWorkflowCode's output looks like to the loader: code, then its inline source map last. */
const FAKE = 'var workflows = 1;\n//# sourceMappingURL=data:application/json;base64,e30=';

describe('the prebuilt workflow bundle (WORKFLOW_BUNDLE_PATH)', () => {
  let dir: string;
  let bundled: number;
  let warnings: string[];
  const opts = () => ({ warn: (m: string) => warnings.push(m), bundle: async () => (bundled++, { code: 'fresh' }) });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-bundle-'));
    bundled = 0;
    warnings = [];
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a named bundle file is loaded as it is, without bundling', async () => {
    const file = path.join(dir, 'workflow-bundle.js');
    fs.writeFileSync(file, FAKE);
    const r = await loadWorkflowBundle(file, opts());
    assert.deepEqual(r, { bundle: { code: FAKE }, prebuilt: true });
    assert.equal(bundled, 0);
    assert.deepEqual(warnings, []);
  });

  it('unset: the workflows are bundled, silently', async () => {
    const r = await loadWorkflowBundle(undefined, opts());
    assert.deepEqual(r, { bundle: { code: 'fresh' }, prebuilt: false });
    assert.equal(bundled, 1);
    assert.deepEqual(warnings, []);
  });

  it('a missing file or one that is no bundle: bundled instead, with a warning naming the file', async () => {
    const missing = path.join(dir, 'gone.js');
    const truncated = path.join(dir, 'truncated.js');
    fs.writeFileSync(truncated, FAKE.slice(0, 20));
    for (const file of [missing, truncated]) {
      const r = await loadWorkflowBundle(file, opts());
      assert.deepEqual(r, { bundle: { code: 'fresh' }, prebuilt: false });
    }
    assert.equal(bundled, 2);
    assert.equal(warnings.length, 2);
    assert.match(warnings[0], /gone\.js is unreadable \(ENOENT\)/);
    assert.match(warnings[1], /truncated\.js is not a workflow bundle/);
  });
});
