/**
 * What a workflow worker process costs to start, with and without a prebuilt workflow bundle
 * (WORKFLOW_BUNDLE_PATH, workers/workflow-bundle.ts): CPU seconds of the process (all its threads,
 * from /proc/<pid>/stat) and wall seconds from spawn to its "workers started" line. The two kinds
 * alternate so load on a shared machine falls on both alike; medians of `--runs` each.
 *
 *   npx tsx bench/worker-start.ts [--runs 5]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { arg } from './args';
import { spawnGroup } from '../test/support/child';
import { runMain } from '../test/support/main';
import { startStack } from '../test/support/stack';
import { writeWorkflowBundle } from '../workers/workflow-bundle';

const runs = arg('runs', 5);
const TICKS = 100; // USER_HZ on Linux

/** utime + stime of a live process, in seconds. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f2 = (n: number) => n.toFixed(2);

async function startOnce(env: Record<string, string>): Promise<{ cpu: number; wall: number }> {
  const t0 = performance.now();
  const proc = spawnGroup('worker-workflow', 'workers/main.ts', { ...env, WORKER_ROLES: 'workflow', LOG_LEVEL: 'info', LOG_FORMAT: 'json', METRICS_PORT: '0', TEMPORAL_METRICS_PORT: '0' });
  try {
    const deadline = Date.now() + 120_000;
    while (!proc.output().includes('"workers started')) {
      if (proc.child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not start:\n${proc.output()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return { cpu: cpuSeconds(proc.child.pid!), wall: (performance.now() - t0) / 1000 };
  } finally {
    await proc.kill('SIGKILL');
  }
}

async function main(): Promise<void> {
  const stack = await startStack({ workers: [] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-bundle-bench-'));
  const file = path.join(dir, 'workflow-bundle.js');
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await writeWorkflowBundle(file);
  const c1 = process.cpuUsage(c0);
  console.log(`bundling once (writeWorkflowBundle, in this process): ${f2((c1.user + c1.system) / 1e6)} s CPU, ${f2((performance.now() - t0) / 1000)} s wall`);
  const rows: Record<'bundled' | 'prebuilt', Array<{ cpu: number; wall: number }>> = { bundled: [], prebuilt: [] };
  for (let i = 0; i < runs; i++) {
    for (const kind of ['bundled', 'prebuilt'] as const) {
      const env = { ...stack.env, WORKFLOW_BUNDLE_PATH: kind === 'prebuilt' ? file : '' };
      const r = await startOnce(env);
      rows[kind].push(r);
      console.log(`run ${i + 1}/${runs} ${kind.padEnd(8)} ${f2(r.cpu)} s CPU, ${f2(r.wall)} s to "workers started"`);
    }
  }
  console.log(`\nworkflow worker start, median of ${runs} (${os.availableParallelism()} cores, load ${os.loadavg()[0].toFixed(1)}):`);
  for (const kind of ['bundled', 'prebuilt'] as const) {
    console.log(`  ${(kind === 'bundled' ? 'bundles at start' : 'WORKFLOW_BUNDLE_PATH').padEnd(20)}  ${f2(median(rows[kind].map((r) => r.cpu)))} s CPU  ${f2(median(rows[kind].map((r) => r.wall)))} s wall`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  await stack.close();
}

runMain(main);
