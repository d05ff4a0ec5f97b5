import { killAllGroups } from './child';
import { mochaHooks } from './hooks';

/**
 * Runs a script's `main` (a bench, a history recorder) and, whether it finishes, throws or is interrupted (SIGINT/SIGTERM), stops
 * everything it started before exiting: every process group spawned through test/support/child.ts
 * and the run's shared services (Temporal, the database, the S3 server) from test/support/hooks.ts.
 */
export function runMain(main: () => Promise<void>): void {
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      await killAllGroups();
      await mochaHooks.afterAll.call({ timeout() {} } as never);
    })());
  const exit = (code: number) => cleanup().finally(() => process.exit(code));
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void exit(130));
  main().then(
    () => exit(0),
    (err) => {
      console.error(err);
      return exit(1);
    },
  );
}
