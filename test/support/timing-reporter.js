'use strict';
// The spec reporter, plus the wall time of each test file (its hooks included), written to
// test-output/file-times.json and the slowest ten printed after the epilogue: the suite's time
// budget is spent per file, so that is where it is measured.
const fs = require('node:fs');
const path = require('node:path');
const { reporters, Runner } = require('mocha');

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END, EVENT_RUN_END } = Runner.constants;

class TimingReporter extends reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const started = new Map();
    const times = new Map();
    const fileOf = (suite) => (suite.file ? path.relative(process.cwd(), suite.file) : undefined);
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      const file = fileOf(suite);
      if (file && suite.parent && suite.parent.root && !started.has(file)) started.set(file, Date.now());
    });
    // A shard of a full run (ops/shards.ts) writes its own file; scripts/test merges them.
    const shard = process.env.VH_TEST_SHARD;
    const out = shard ? `test-output/file-times.${shard}.json` : 'test-output/file-times.json';
    const write = () => {
      const sorted = [...times.entries()].sort((a, b) => b[1] - a[1]);
      try {
        fs.mkdirSync('test-output', { recursive: true });
        fs.writeFileSync(out, JSON.stringify(Object.fromEntries(sorted), null, 1));
      } catch {
        // the report is a convenience; a read-only tree must not fail the run
      }
      return sorted;
    };
    runner.on(EVENT_SUITE_END, (suite) => {
      const file = fileOf(suite);
      if (file && suite.parent && suite.parent.root && started.has(file)) {
        times.set(file, Date.now() - started.get(file));
        // Written as each file ends, so an interrupted or still running suite says where its time went.
        write();
      }
    });
    runner.once(EVENT_RUN_END, () => {
      const sorted = write();
      if (sorted.length > 1 && !shard) {
        const top = sorted.slice(0, 10).map(([f, ms]) => `    ${(ms / 1000).toFixed(0).padStart(4)}s  ${f}`);
        process.stdout.write(`\n  slowest files (test-output/file-times.json):\n${top.join('\n')}\n`);
      }
    });
  }
}

module.exports = TimingReporter;
