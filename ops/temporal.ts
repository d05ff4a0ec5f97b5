import fs from 'node:fs';
import path from 'node:path';
import { die, say, warn } from './log';
import { type Child, portOpen, run, sleep, spawnChild, tail } from './proc';
import type { ChildSpec } from './supervisor';

/**
 * Temporal for scripts/start. Decided once, from the environment scripts/start was given:
 * - `external`: the user set TEMPORAL_ADDRESS: health-checked, never started or restarted by us;
 * - `reuse`: something already serves on TEMPORAL_PORT (another scripts/start): used as is;
 * - `dev`: we start `temporal server start-dev` on <data>/temporal.sqlite as a supervised child,
 *   and a restart starts the same command on the same file (every workflow survives).
 * The address we export to our children never feeds back into this decision.
 */

export const searchAttributes = ['VideoId', 'WorkspaceId', 'VideoStatus'];

export type TemporalPlan =
  | { kind: 'external'; address: string }
  | { kind: 'reuse'; address: string; uiUrl: string }
  | { kind: 'dev'; address: string; uiUrl: string; port: number; uiPort: number };

export async function planTemporal(env: NodeJS.ProcessEnv, isOpen: (port: number) => Promise<boolean> = (p) => portOpen('127.0.0.1', p)): Promise<TemporalPlan> {
  if (env.TEMPORAL_ADDRESS) return { kind: 'external', address: env.TEMPORAL_ADDRESS };
  const port = Number(env.TEMPORAL_PORT || 7233);
  const uiPort = Number(env.TEMPORAL_UI_PORT || 8233);
  const address = `127.0.0.1:${port}`;
  const uiUrl = `http://localhost:${uiPort}`;
  if (await isOpen(port)) return { kind: 'reuse', address, uiUrl };
  if (await isOpen(uiPort)) die(`port ${uiPort} (Temporal UI) is in use; set TEMPORAL_UI_PORT to a free port`);
  return { kind: 'dev', address, uiUrl, port, uiPort };
}

export async function temporalHealthy(cli: string, address: string): Promise<boolean> {
  return (await run(cli, ['operator', 'cluster', 'health', '--address', address, '--command-timeout', '3s'], { timeoutMs: 10_000 })).code === 0;
}

/** Registers our search attributes on a server we didn't start (they may exist already). */
async function registerSearchAttributes(cli: string, address: string): Promise<void> {
  const existing = (await run(cli, ['operator', 'search-attribute', 'list', '--address', address, '--command-timeout', '10s'])).stdout;
  for (const sa of searchAttributes) {
    if (new RegExp(`\\b${sa}\\b`).test(existing)) continue;
    const r = await run(cli, ['operator', 'search-attribute', 'create', '--address', address, '--name', sa, '--type', 'Keyword', '--command-timeout', '10s']);
    if (r.code !== 0) warn(`could not register search attribute ${sa} on ${address}`);
  }
}

/** Checks a server we don't run; dies when an explicit TEMPORAL_ADDRESS doesn't answer. */
export async function checkTemporal(cli: string, plan: Exclude<TemporalPlan, { kind: 'dev' }>): Promise<void> {
  const healthy = await temporalHealthy(cli, plan.address);
  if (plan.kind === 'external') {
    if (!healthy) die(`TEMPORAL_ADDRESS=${plan.address} doesn't answer a Temporal health check; start that server, or unset TEMPORAL_ADDRESS to get a local dev server`);
    say(`using Temporal at TEMPORAL_ADDRESS=${plan.address} (no dev server started)`);
  } else {
    say(`reusing the Temporal server already listening on ${plan.address}`);
    if (!healthy) warn(`something listens on ${plan.address} but doesn't answer a Temporal health check`);
  }
  await registerSearchAttributes(cli, plan.address);
}

/**
 * One task-queue partition instead of the dev server's four. The dev server serves one machine,
 * whose queues have a few pollers each (the transcode worker two): over four partitions a task
 * added to one with no poller waiting went through the partitions' forwarding or the backlog
 * before a worker took it. bench/temporal-server.ts, 3 s uploads one after another: 5.8 s a video
 * with four, 3.1 s with one, and 0.72 → 0.54 server CPU s a video. Partitions are a server's
 * scaling detail (no ordering or delivery guarantee differs); a real cluster keeps its own setting.
 */
export const ONE_TASK_QUEUE_PARTITION = ['matching.numTaskqueueReadPartitions=1', 'matching.numTaskqueueWritePartitions=1'].flatMap((v) => ['--dynamic-config-value', v]);

/**
 * SPEC §25 fair share (docs/fairness.md): Temporal's Task Queue Priority and Fairness. With
 * `matching.enableFairness` (which implies `matching.useNewMatcher`), a queued task of a lower
 * priority key is dispatched first, and within a key the workspaces (fairness keys) share the
 * workers by weight. Without the new matcher the server ignores both and dispatches FIFO.
 */
export const FAIR_MATCHING = ['--dynamic-config-value', 'matching.enableFairness=true'];
/**
 * Priority without fairness. Fairness keeps its backlog in another table (`tasks_v2`), and server
 * v1.29 has no migration between the two: tasks a server left queued before fairness was on
 * would never be read with it on. A SQLite file made without fairness keeps the old table.
 */
export const PRIORITY_MATCHING = ['--dynamic-config-value', 'matching.useNewMatcher=true'];
/** What the test stacks' dev servers run with: one partition, priority and fairness. */
export const TEST_MATCHING = [...ONE_TASK_QUEUE_PARTITION, ...FAIR_MATCHING];

/** Written beside a SQLite file the dev server started on with one partition. */
const PARTITION_MARKER = 'temporal.partitions';
/** Written beside a SQLite file the dev server started on with fairness. */
const FAIRNESS_MARKER = 'temporal.fairness';

const isNewFile = (dataDir: string) => !fs.existsSync(path.join(dataDir, 'temporal.sqlite'));

/**
 * One partition for a new SQLite file; the default four for a file an earlier version made (no
 * marker): tasks it left in partitions 2–4 would never be read by a server reading only one.
 */
export function devServerPartitions(dataDir: string): 1 | 4 {
  if (fs.existsSync(path.join(dataDir, PARTITION_MARKER))) return 1;
  return isNewFile(dataDir) ? 1 : 4;
}

/** Fairness for a new SQLite file (or one the marker says had it); priority only for an older one. */
export function devServerFairness(dataDir: string): boolean {
  return fs.existsSync(path.join(dataDir, FAIRNESS_MARKER)) || isNewFile(dataDir);
}

export function devServerArgs(plan: { port: number; uiPort: number }, dataDir: string, partitions = devServerPartitions(dataDir), fair = devServerFairness(dataDir)): string[] {
  const args = [
    'server', 'start-dev', '--db-filename', path.join(dataDir, 'temporal.sqlite'), '--ip', '127.0.0.1', '--port', String(plan.port), '--ui-port', String(plan.uiPort), '--log-level', 'warn',
    ...(partitions === 1 ? ONE_TASK_QUEUE_PARTITION : []),
    ...(fair ? FAIR_MATCHING : PRIORITY_MATCHING),
  ];
  for (const sa of searchAttributes) args.push('--search-attribute', `${sa}=Keyword`);
  return args;
}

/** The dev server as a supervised child: every start runs the same command on the same SQLite file and waits for health. */
export function devServer(cli: string, plan: { address: string; port: number; uiPort: number }, dataDir: string, healthTimeoutMs = 60_000): ChildSpec {
  const log = path.join(dataDir, 'logs', 'temporal.log');
  return {
    name: 'Temporal dev server',
    async start(): Promise<Child> {
      const deadline = Date.now() + healthTimeoutMs;
      for (;;) {
        say(`starting Temporal dev server on ${plan.address} (log: ${log})`);
        const partitions = devServerPartitions(dataDir);
        const fair = devServerFairness(dataDir);
        fs.mkdirSync(dataDir, { recursive: true });
        if (partitions === 1) fs.writeFileSync(path.join(dataDir, PARTITION_MARKER), '1\n');
        if (fair) fs.writeFileSync(path.join(dataDir, FAIRNESS_MARKER), '1\n');
        else warn(`${path.join(dataDir, 'temporal.sqlite')} was made before fair share: Temporal runs with priority but without per-workspace fairness (docs/fairness.md)`);
        const child = spawnChild(cli, devServerArgs(plan, dataDir, partitions, fair), { logFile: log });
        let exited = false;
        void child.exited.then(() => (exited = true));
        while (!exited && !(await temporalHealthy(cli, plan.address))) {
          if (Date.now() > deadline) {
            child.signal('SIGKILL', true);
            throw new Error(`the Temporal dev server didn't become healthy within ${healthTimeoutMs / 1000}s\n${tail(log)}`);
          }
          await sleep(300);
        }
        if (!exited) {
          say(`Temporal dev server ready on ${plan.address}`);
          return child;
        }
        // E.g. SQLITE_BUSY while a previous server on the same file is still stopping: try again until the deadline.
        if (Date.now() > deadline) throw new Error(`the Temporal dev server exited during startup\n${tail(log)}`);
        warn('the Temporal dev server exited during startup; trying again');
        await sleep(1000);
      }
    },
  };
}
