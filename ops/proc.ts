import { spawn, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** Small process helpers shared by provisioning and the supervisor. */

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunResult extends ExitStatus {
  stdout: string;
  stderr: string;
}

/** Provisioning commands still running: an early stop ends them too. */
const running = new Set<number>();

export function killRunning(): void {
  for (const pid of running) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
}

/**
 * Runs a command to its end. `inherit` shows its output (migrations, npm); otherwise output is
 * captured, or appended to `logFile`. Never throws for a non-zero exit: callers decide.
 */
export function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; inherit?: boolean; logFile?: string; timeoutMs?: number; input?: string; uid?: number; gid?: number } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const logFd = opts.logFile ? fs.openSync(opts.logFile, 'a') : undefined;
    const out = opts.inherit ? 'inherit' : logFd ?? 'pipe';
    const child = spawn(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, uid: opts.uid, gid: opts.gid, stdio: [opts.input === undefined ? 'ignore' : 'pipe', out, opts.inherit ? 'inherit' : logFd ?? 'pipe'] });
    if (child.pid) running.add(child.pid);
    child.stdout?.on('data', (d) => (stdout += d));
    child.stderr?.on('data', (d) => (stderr += d));
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    const timer = opts.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs) : undefined;
    const done = (r: RunResult) => {
      if (timer) clearTimeout(timer);
      if (child.pid) running.delete(child.pid);
      if (logFd !== undefined) fs.closeSync(logFd);
      resolve(r);
    };
    child.once('error', (err) => done({ code: 127, signal: null, stdout, stderr: stderr + String(err.message) }));
    child.once('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

/** The path of `name` on PATH (or `name` itself when it holds a slash and is executable). */
export function which(name: string, pathEnv = process.env.PATH ?? ''): string | undefined {
  const candidates = name.includes('/') ? [name] : pathEnv.split(':').filter(Boolean).map((d) => path.join(d, name));
  return candidates.find(isExecutable);
}

export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** True when something accepts TCP connections on host:port. */
export function portOpen(host: string, port: number, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    const end = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => end(false));
    sock.once('connect', () => end(true));
    sock.once('error', () => end(false));
  });
}

/** True while `pid` runs; a zombie counts as dead. */
export function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    if (fs.existsSync('/proc/self')) return false; // a /proc without this pid: gone
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

/** "exit status 1" or "killed by SIGKILL". */
export function describeExit(s: ExitStatus): string {
  return s.signal ? `killed by ${s.signal}` : `exit status ${s.code ?? '?'}`;
}

/** The last lines of a log file, framed, for failure messages. */
export function tail(file: string, lines = 40): string {
  try {
    const text = fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    return `---- last lines of ${file} ----\n${text}\n----`;
  } catch {
    return '';
  }
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });

/** A long-running child in its own session and process group (so a terminal's Ctrl-C reaches only us). */
export interface Child {
  pid: number;
  exited: Promise<ExitStatus>;
  /** Signals the process, then (`group`) its whole process group. */
  signal(sig: NodeJS.Signals, group?: boolean): void;
}

export function spawnChild(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; logFile?: string; uid?: number; gid?: number } = {}): Child {
  const out = opts.logFile ? fs.openSync(opts.logFile, 'a') : 'inherit';
  const spawnOpts: SpawnOptions = { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ['ignore', out, out], detached: true, uid: opts.uid, gid: opts.gid };
  const child = spawn(cmd, args, spawnOpts);
  if (typeof out === 'number') fs.closeSync(out);
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('error', () => resolve({ code: 127, signal: null }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const pid = child.pid ?? -1;
  return {
    pid,
    exited,
    signal(sig, group = false) {
      if (pid <= 0) return;
      try {
        process.kill(group ? -pid : pid, sig);
      } catch {
        /* gone */
      }
    },
  };
}
