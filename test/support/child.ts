import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

/** A service process (API or worker) of a test, in its own process group as on its own machine. */
export interface Proc {
  name: string;
  child: ChildProcess;
  output(): string;
  /** Signals the whole group (the process and its ffmpeg children); resolves once it has exited. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const live = new Set<Proc>();

/**
 * A child started detached (its own process group), as a Proc: killed as a group, and remembered
 * until it exits so killAllGroups() can stop it when a bench fails halfway.
 */
export function adoptGroup(name: string, child: ChildProcess, output: () => string = () => ''): Proc {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proc: Proc = {
    name,
    child,
    output,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, signal);
      } catch {
        /* already gone */
      }
      await exited;
    },
  };
  live.add(proc);
  void exited.then(() => live.delete(proc));
  return proc;
}

/**
 * The one spawner of the tests and benches: `entry` (a .ts file under the repository) through tsx,
 * detached into its own process group, its output kept for failure messages. `wrap` runs node
 * under another command (e.g. `['taskset', '-c', '0']`). `tree` runs `entry` of another checkout of
 * the repository (a bench's baseline: bench/api.ts --baseline).
 */
export function spawnGroup(name: string, entry: string, env: Record<string, string | undefined>, nodeArgs: string[] = [], wrap: string[] = [], tree = root): Proc {
  const argv = [...wrap, process.execPath, ...nodeArgs, '--import', 'tsx', path.join(tree, entry)];
  const child = spawn(argv[0], argv.slice(1), { cwd: tree, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  return adoptGroup(name, child, () => out);
}

/** SIGKILLs every group still running (a bench that failed halfway). */
export async function killAllGroups(): Promise<void> {
  await Promise.all([...live].map((p) => p.kill('SIGKILL')));
}

/**
 * A worker process; `kill()` (SIGKILL by default) takes the worker and its ffmpeg children down at
 * once, like a crash. It logs warnings only unless `env.LOG_LEVEL` asks for more. It inherits this
 * process's env, WORKFLOW_BUNDLE_PATH (the run's workflow bundle, ops/test.ts) included.
 */
export function spawnWorker(env: Record<string, string>, roles = 'transcode'): Proc {
  return spawnGroup(`worker-${roles}`, 'workers/main.ts', { METRICS_PORT: '0', TEMPORAL_METRICS_PORT: '0', ...process.env, ...env, WORKER_ROLES: roles, LOG_LEVEL: env.LOG_LEVEL ?? 'warn' });
}

/** An API server in its own process on `env.PORT`, as a second machine behind a proxy would run it; resolves once /healthz answers. */
export async function spawnApi(env: Record<string, string>, nodeArgs: string[] = [], tree?: string): Promise<{ url: string; pid: number; output: () => string; kill: (signal?: NodeJS.Signals) => Promise<void> }> {
  const proc = spawnGroup(`api-${env.PORT}`, 'api/server.ts', { API_METRICS_PORT: '0', ...env, HOST: '127.0.0.1', LOG_LEVEL: env.LOG_LEVEL === 'silent' ? 'warn' : (env.LOG_LEVEL ?? 'warn') }, nodeArgs, [], tree);
  const url = `http://127.0.0.1:${env.PORT}`;
  const kill = (signal: NodeJS.Signals = 'SIGTERM') => proc.kill(signal);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`API process exited: ${proc.output()}`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      await kill('SIGKILL');
      throw new Error(`API process did not listen within 60 s: ${proc.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, pid: proc.child.pid!, output: proc.output, kill };
}
