import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ProvisionError, say } from './log';
import { repoRoot } from './paths';
import { killRunning, run } from './proc';
import { provisionForTests } from './test-env';
import { mergeTimes, planShards, readTimes, shardCount, testFiles, TIMES_FILE } from './shards';

/**
 * scripts/test: provision what the suite needs, then run mocha (config: .mocharc.json) on the
 * arguments. The last line is always `N passed, N failed` (`, N skipped` when tests are pending),
 * also when provisioning fails (`0 passed, 1 failed`); the exit code is mocha's.
 */

/** mocha adds a config's `spec` to named files, so the default spec is given only when no test path is named. */
export function namesTests(args: string[]): boolean {
  return args.some((a) => a.startsWith('test/') || a.startsWith('./test/'));
}

export function mochaArgs(args: string[], color: boolean): string[] {
  const named = namesTests(args);
  return [...(color ? ['--color'] : []), ...args, ...(named ? [] : ['test/**/*.test.ts'])];
}

export interface Counts {
  passed: number;
  failed: number;
  pending: number;
  note?: string;
}

/** The `N passed, N failed` line (`, N skipped` when tests are pending). */
export function countsLine(c: Counts): string {
  return `${c.passed} passed, ${c.failed} failed${c.pending ? `, ${c.pending} skipped` : ''}`;
}

/** Counts from the spec reporter's epilogue ("  12 passing (3s)", "  1 pending", "  2 failing"). */
export function summarize(output: string, rc: number): { line: string; note?: string } {
  const c = countOutput(output, rc);
  return { line: countsLine(c), note: c.note };
}

export function countOutput(output: string, rc: number): Counts {
  const plain = output.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
  const count = (word: string) => {
    const all = [...plain.matchAll(new RegExp(`^\\s*(\\d+) ${word}(?: |$)`, 'gm'))];
    return all.length ? Number(all[all.length - 1][1]) : 0;
  };
  const passed = count('passing');
  let failed = count('failing');
  const pending = count('pending');
  let note: string | undefined;
  if (rc !== 0 && failed === 0) {
    note = `mocha exited with status ${rc} without reporting failing tests; counting that as 1 failure`;
    failed = 1;
  }
  return { passed, failed, pending, note };
}

/**
 * One mocha process. With a `prefix` (a shard's), its output goes to stdout a line at a time with
 * the prefix, so two shards' reports interleave readably; the log file holds it unprefixed.
 */
function runMocha(args: string[], env: NodeJS.ProcessEnv, logFile: string, prefix = ''): Promise<{ rc: number; output: string }> {
  return new Promise((resolve) => {
    const log = fs.createWriteStream(logFile);
    let output = '';
    const child = spawn(path.join(repoRoot, 'node_modules/.bin/mocha'), args, { env, cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const relay = (sig: NodeJS.Signals) => () => child.kill(sig);
    const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((s) => [s, relay(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    let partial = '';
    const show = (text: string, flush = false) => {
      if (!prefix) return void process.stdout.write(text);
      partial += text;
      const lines = partial.split('\n');
      partial = flush ? '' : lines.pop()!;
      const whole = flush ? lines.filter((l, i) => l || i < lines.length - 1) : lines;
      if (whole.length) process.stdout.write(whole.map((l) => `${prefix}${l}\n`).join(''));
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.on('data', (chunk: Buffer) => {
        output += chunk;
        log.write(chunk);
        show(chunk.toString());
      });
    }
    child.once('close', (code, signal) => {
      show('', true);
      for (const [s, h] of handlers) process.off(s, h);
      log.end(() => resolve({ rc: code ?? 128 + (signal ? os.constants.signals[signal] : 1), output }));
    });
  });
}

/** Postgres connections one shard may hold at its peak (measured ~22). */
const PER_SHARD_CONNECTIONS = 30;

async function maxConnections(url: string | undefined): Promise<number | undefined> {
  if (!url) return undefined;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query<{ max_connections: string }>('show max_connections');
    return Number(rows[0].max_connections);
  } catch {
    return undefined;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A full run (no test file named) is split into shards (ops/shards.ts), run side by side; a run of
 * named files is one mocha process, as before. Returns the exit code and the summed counts.
 */
async function runSuite(args: string[], env: NodeJS.ProcessEnv, outDir: string, color: boolean): Promise<{ rc: number; counts: Counts }> {
  let n = namesTests(args) ? 1 : shardCount(env);
  if (n > 1) {
    // A shard peaked at ~22 open connections (sampled over a full run: 44 for two; its stacks'
    // pools close idle connections after 2 s, test/support/stack.ts); 30 a shard leaves room.
    // Fewer shards than asked when the server allows fewer.
    const max = await maxConnections(env.DATABASE_URL);
    if (max !== undefined && max < PER_SHARD_CONNECTIONS * n) {
      const fit = Math.max(1, Math.floor(max / PER_SHARD_CONNECTIONS));
      say(`Postgres allows ${max} connections: ${fit} shard(s) instead of ${n}`);
      n = fit;
    }
  }
  if (n === 1) {
    const { rc, output } = await runMocha(mochaArgs(args, color), env, path.join(outDir, 'mocha.log'));
    return { rc, counts: countOutput(output, rc) };
  }
  const shards = planShards(testFiles(repoRoot), readTimes(path.join(repoRoot, TIMES_FILE)), n);
  say(`running ${shards.length} shards side by side (VH_TEST_SHARDS=${n}; ${shards.map((s) => s.length).join(' + ')} files, balanced by ${TIMES_FILE}); logs: test-output/mocha.<k>.log`);
  const results = await Promise.all(
    shards.map((files, i) => runMocha([...(color ? ['--color'] : []), ...args, ...files], { ...env, VH_TEST_SHARD: String(i + 1), VH_TEST_SHARD_COUNT: String(shards.length) }, path.join(outDir, `mocha.${i + 1}.log`), `[${i + 1}] `)),
  );
  const counts = results.map((r) => countOutput(r.output, r.rc));
  const merged = mergeTimes(shards.map((_, i) => readTimes(path.join(outDir, `file-times.${i + 1}.json`))));
  fs.writeFileSync(path.join(outDir, 'file-times.json'), JSON.stringify(merged, null, 1));
  const top = Object.entries(merged).slice(0, 10).map(([f, ms]) => `    ${(ms / 1000).toFixed(0).padStart(4)}s  ${f}`);
  process.stdout.write(`\n  slowest files of all shards (test-output/file-times.json):\n${top.join('\n')}\n`);
  for (const [i, c] of counts.entries()) process.stdout.write(`  shard ${i + 1}: ${countsLine(c)}${c.note ? ` (${c.note})` : ''}\n`);
  return {
    rc: results.find((r) => r.rc !== 0)?.rc ?? 0,
    counts: counts.reduce((a, c) => ({ passed: a.passed + c.passed, failed: a.failed + c.failed, pending: a.pending + c.pending }), { passed: 0, failed: 0, pending: 0 }),
  };
}

/** Unit tests start no worker: a run of only test/unit files skips the bundle (and its 3 s of CPU). */
export function needsWorkflowBundle(args: string[]): boolean {
  const named = args.filter((a) => a.startsWith('test/') || a.startsWith('./test/'));
  return !named.length || named.some((a) => !a.replace(/^\.\//, '').startsWith('test/unit/'));
}

/** Where a run's workflow bundle goes (WORKFLOW_BUNDLE_PATH of its shards and of every worker they spawn). */
export const WORKFLOW_BUNDLE_FILE = 'test-output/workflow-bundle.js';

/**
 * Bundles the workflows once for the whole run, in a process of its own beside provisioning (webpack
 * is ~3 s of CPU): every shard's in-process workers and every worker process a test spawns (they
 * inherit the env) load this file instead of bundling again. Built at every run from the checkout
 * as it is, so never stale. A failure is a warning: each worker then bundles its own, as before.
 */
async function bundleForRun(): Promise<string | undefined> {
  const file = path.join(repoRoot, WORKFLOW_BUNDLE_FILE);
  fs.rmSync(file, { force: true });
  const r = await run(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'workers/workflow-bundle.ts'), file], { cwd: repoRoot });
  if (r.code === 0 && fs.existsSync(file)) return file;
  process.stderr.write(`warning: bundling the workflows failed (${r.code ?? r.signal}); each worker bundles its own\n${r.stderr}`);
  return undefined;
}

async function main(): Promise<number> {
  const t0 = Date.now();
  fs.mkdirSync(path.join(repoRoot, 'test-output'), { recursive: true });
  const bundled = needsWorkflowBundle(process.argv.slice(2)) ? bundleForRun() : Promise.resolve(undefined);
  let provisioned: Awaited<ReturnType<typeof provisionForTests>>;
  const early = () => {
    killRunning();
    process.exit(130);
  };
  process.once('SIGINT', early).once('SIGTERM', early);
  try {
    provisioned = await provisionForTests();
  } catch (err) {
    const msg = err instanceof ProvisionError ? err.message : ((err as Error).stack ?? String(err));
    process.stderr.write(`error: ${msg}\nprovisioning failed; no tests were run\n`);
    console.log('0 passed, 1 failed');
    return 1;
  } finally {
    process.off('SIGINT', early).off('SIGTERM', early);
  }
  const bundleFile = await bundled;
  const t1 = Date.now();
  const env = bundleFile ? { ...provisioned.env, WORKFLOW_BUNDLE_PATH: bundleFile } : provisioned.env;
  say(`provisioned in ${Math.round((t1 - t0) / 1000)}s (DATABASE_URL=${env.DATABASE_URL}, TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH}, VERSITYGW_PATH=${env.VERSITYGW_PATH})`);
  const outDir = path.join(repoRoot, 'test-output');
  fs.mkdirSync(outDir, { recursive: true });
  const color = !!process.stdout.isTTY && !env.NO_COLOR;
  const { rc, counts } = await runSuite(process.argv.slice(2), env, outDir, color);
  const t2 = Date.now();
  await provisioned.stop();
  if (counts.note) process.stderr.write(`${counts.note}\n`);
  console.log(`provisioning: ${Math.round((t1 - t0) / 1000)}s, tests: ${Math.round((t2 - t1) / 1000)}s (mocha output: test-output/mocha*.log)`);
  console.log(countsLine(counts));
  return rc;
}

if (require.main === module) {
  main().then(
    (rc) => process.exit(rc),
    (err: Error) => {
      process.stderr.write(`${err.stack ?? err.message}\nprovisioning failed; no tests were run\n`);
      console.log('0 passed, 1 failed');
      process.exit(1);
    },
  );
}
