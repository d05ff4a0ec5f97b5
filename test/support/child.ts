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
    env: { ...process.env, ...env, WORKER_ROLES: roles, LOG_LEVEL: 'warn' },
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
