import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProvisionError, say } from './log';
import { repoRoot } from './paths';
import { killRunning } from './proc';
import { provisionForTests } from './test-env';

/**
 * scripts/test: provision what the suite needs, then run mocha (config: .mocharc.json) on the
 * arguments. The last line is always `N passed, N failed` (`, N skipped` when tests are pending),
 * also when provisioning fails (`0 passed, 1 failed`); the exit code is mocha's.
 */

/** mocha adds a config's `spec` to named files, so the default spec is given only when no test path is named. */
export function mochaArgs(args: string[], color: boolean): string[] {
  const named = args.some((a) => a.startsWith('test/') || a.startsWith('./test/'));
  return [...(color ? ['--color'] : []), ...args, ...(named ? [] : ['test/**/*.test.ts'])];
}

/** Counts from the spec reporter's epilogue ("  12 passing (3s)", "  1 pending", "  2 failing"). */
export function summarize(output: string, rc: number): { line: string; note?: string } {
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
  return { line: `${passed} passed, ${failed} failed${pending ? `, ${pending} skipped` : ''}`, note };
}

function runMocha(args: string[], env: NodeJS.ProcessEnv, logFile: string): Promise<{ rc: number; output: string }> {
  return new Promise((resolve) => {
    const log = fs.createWriteStream(logFile);
    let output = '';
    const child = spawn(path.join(repoRoot, 'node_modules/.bin/mocha'), args, { env, cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    const relay = (sig: NodeJS.Signals) => () => child.kill(sig);
    const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((s) => [s, relay(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.on('data', (chunk: Buffer) => {
        output += chunk;
        log.write(chunk);
        process.stdout.write(chunk);
      });
    }
    child.once('close', (code, signal) => {
      for (const [s, h] of handlers) process.off(s, h);
      log.end(() => resolve({ rc: code ?? 128 + (signal ? os.constants.signals[signal] : 1), output }));
    });
  });
}

async function main(): Promise<number> {
  const t0 = Date.now();
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
  const t1 = Date.now();
  const { env } = provisioned;
  say(`provisioned in ${Math.round((t1 - t0) / 1000)}s (DATABASE_URL=${env.DATABASE_URL}, TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH}, VERSITYGW_PATH=${env.VERSITYGW_PATH})`);
  const outDir = path.join(repoRoot, 'test-output');
  fs.mkdirSync(outDir, { recursive: true });
  const logFile = path.join(outDir, 'mocha.log');
  const color = !!process.stdout.isTTY && !env.NO_COLOR;
  const { rc, output } = await runMocha(mochaArgs(process.argv.slice(2), color), env, logFile);
  const t2 = Date.now();
  await provisioned.stop();
  const { line, note } = summarize(output, rc);
  if (note) process.stderr.write(`${note}\n`);
  console.log(`provisioning: ${Math.round((t1 - t0) / 1000)}s, tests: ${Math.round((t2 - t1) / 1000)}s (mocha output: test-output/mocha.log)`);
  console.log(line);
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
