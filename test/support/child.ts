import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

/**
 * A worker in its own process group, as a separate machine would run it; `kill()` takes the
 * worker and its ffmpeg children down at once, like a crash.
 */
export function spawnWorker(env: Record<string, string>, roles = 'transcode'): { child: ChildProcess; output: () => string; kill: (signal?: NodeJS.Signals) => Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'workers', 'main.ts')], {
    cwd: root,
    env: { METRICS_PORT: '0', TEMPORAL_METRICS_PORT: '0', ...process.env, ...env, WORKER_ROLES: roles, LOG_LEVEL: 'warn' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    output: () => out,
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
}

/** An API server in its own process on `env.PORT`, as a second machine behind a proxy would run it. */
export async function spawnApi(env: Record<string, string>, nodeArgs: string[] = []): Promise<{ url: string; output: () => string; kill: (signal?: NodeJS.Signals) => Promise<void> }> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.join(root, 'api', 'server.ts')], {
    cwd: root,
    env: { ...process.env, API_METRICS_PORT: '0', ...env, HOST: '127.0.0.1', LOG_LEVEL: env.LOG_LEVEL === 'silent' ? 'warn' : (env.LOG_LEVEL ?? 'warn') },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${env.PORT}`;
  const kill = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid!, signal);
    } catch {
      /* already gone */
    }
    await exited;
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`API process exited: ${out}`);
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      await kill('SIGKILL');
      throw new Error(`API process did not listen within 60 s: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, output: () => out, kill };
}
