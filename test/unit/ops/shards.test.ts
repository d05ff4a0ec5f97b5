import assert from 'node:assert/strict';
import path from 'node:path';
import { mergeTimes, planShards, shardCount, testFiles, TOGETHER } from '../../../ops/shards';

describe('ops/shards: splitting a full run of the suite', () => {
  it('deals files longest first onto the least loaded shard, unknown files at the median', () => {
    const times = { 'a.test.ts': 100, 'b.test.ts': 60, 'c.test.ts': 50, 'd.test.ts': 10 };
    const shards = planShards(['a.test.ts', 'b.test.ts', 'c.test.ts', 'd.test.ts', 'new.test.ts'], times, 2, []);
    // the median of the known times is 60: a→1 (100), b→2 (60), new→2 (120), c→1 (150), d→2 (130)
    assert.deepEqual(shards, [['a.test.ts', 'c.test.ts'], ['b.test.ts', 'd.test.ts', 'new.test.ts']]);
    assert.deepEqual(shards.flat().sort(), ['a.test.ts', 'b.test.ts', 'c.test.ts', 'd.test.ts', 'new.test.ts']);
  });

  it('keeps a TOGETHER group in one shard and never returns an empty shard', () => {
    const files = ['x.test.ts', 'y.test.ts', 'z.test.ts'];
    const shards = planShards(files, { 'x.test.ts': 100, 'y.test.ts': 90, 'z.test.ts': 80 }, 2, [['x.test.ts', 'z.test.ts']]);
    assert.deepEqual(shards, [['x.test.ts', 'z.test.ts'], ['y.test.ts']]);
    assert.deepEqual(planShards(['x.test.ts'], {}, 4), [['x.test.ts']]);
  });

  it('finds every test file of the suite, and the groups name real files', () => {
    const root = path.resolve(__dirname, '../../..');
    const files = testFiles(root);
    assert.ok(files.includes('test/unit/ops/shards.test.ts'));
    assert.ok(files.every((f) => f.startsWith('test/') && f.endsWith('.test.ts')));
    for (const f of TOGETHER.flat()) assert.ok(files.includes(f), `${f} exists`);
    const shards = planShards(files, {}, 2);
    assert.equal(shards.flat().length, files.length);
    for (const g of TOGETHER) assert.ok(shards.some((s) => g.every((f) => s.includes(f))), `${g} share a shard`);
  });

  it('VH_TEST_SHARDS: 1 turns sharding off, nonsense falls back to 3; times merge slowest first', () => {
    assert.equal(shardCount({}), 3);
    assert.equal(shardCount({ VH_TEST_SHARDS: '1' }), 1);
    assert.equal(shardCount({ VH_TEST_SHARDS: '2' }), 2);
    assert.equal(shardCount({ VH_TEST_SHARDS: 'x' }), 3);
    assert.equal(shardCount({ VH_TEST_SHARDS: '0' }), 3);
    assert.deepEqual(Object.keys(mergeTimes([{ a: 1, b: 5 }, { c: 3 }])), ['b', 'c', 'a']);
  });
});
