import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Load {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export interface Result {
  rps: number;
  p99: number;
  non2xx: number;
  errors: number;
}

// autocannon runs in a child process, so its CPU is not the measured server's; the child prints
// its summary as JSON and only what the tables need is kept.
const LOADER = `
const autocannon = require('autocannon');
autocannon(JSON.parse(process.argv[1]), (err, r) => {
  if (err) { console.error(err); process.exit(1); }
  console.log(JSON.stringify({ rps: r.requests.average, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts }));
});`;

/** `connections` concurrent requests of `l` for `seconds`. */
export async function autocannon(l: Load, o: { connections: number; seconds: number }): Promise<Result> {
  const opts = { url: l.url, method: l.method ?? 'GET', headers: l.headers, body: l.body, connections: o.connections, duration: o.seconds };
  const { stdout } = await run(process.execPath, ['-e', LOADER, JSON.stringify(opts)], { cwd: path.join(__dirname, '..'), maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

/**
 * The same load through wrk (Debian's `wrk`, C, one thread here), the harness issue 33's figures
 * were taken with: its own cost per request is lower than autocannon's, so the ratios are the
 * server's more than the load generator's. Undefined when wrk is not installed.
 */
export async function wrk(l: Load, o: { connections: number; seconds: number }): Promise<Result | undefined> {
  if (l.method && l.method !== 'GET') return undefined;
  const headers = Object.entries(l.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  try {
    const { stdout } = await run('wrk', ['-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--latency', ...headers, l.url], { maxBuffer: 1 << 20 });
    const p99 = /^\s+99%\s+([\d.]+)(us|ms|s)\b/m.exec(stdout);
    const ms = p99 ? Number(p99[1]) * ({ us: 0.001, ms: 1, s: 1000 } as const)[p99[2] as 'us' | 'ms' | 's'] : NaN;
    const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
    const errs = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
    return {
      rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]),
      p99: Math.round(ms * 10) / 10,
      non2xx,
      errors: errs ? errs.slice(1).reduce((n, x) => n + Number(x), 0) : 0,
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
