import { spawnSync } from 'node:child_process';
import { repoRoot } from './paths';
import { provisionForTests } from './test-env';

/** scripts/record-transcode: provision Postgres and Temporal as scripts/test does, then record the transcode histories. */
async function main(): Promise<number> {
  const { env, stop } = await provisionForTests({ browser: false, s3: false, dashboard: false, chart: false });
  try {
    return spawnSync(process.execPath, ['--import', 'tsx', 'test/replay/record-transcode.ts', ...process.argv.slice(2)], { env, cwd: repoRoot, stdio: 'inherit' }).status ?? 1;
  } finally {
    await stop();
  }
}

main().then(
  (rc) => process.exit(rc),
  (err: Error) => {
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(1);
  },
);
