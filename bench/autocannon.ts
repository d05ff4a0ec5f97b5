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
