import fs from 'node:fs';
import path from 'node:path';

/**
 * Splitting a full run of the suite into shards: separate mocha processes, each with its own
 * lazily started Temporal dev server, Postgres database and S3 server (test/support/hooks.ts),
 * run side by side. Most of a test's wall time is waiting (a workflow's timers, an encoder's
 * real-time feed, a browser's playback), so two processes on two cores finish in a little more
 * than half the time of one.
 *
 * Files are dealt longest first onto the least loaded shard, by the times of an earlier full run
 * (`test/support/file-times.json`, refreshed from `test-output/file-times.json`); a file that run
 * did not see counts as the median. Files in one `TOGETHER` group share a shard because they
 * share something on disk that is not safe to build twice at once.
 */

/** Both compile the project into the same incremental `dist/` (ops/start.ts's compileArgs). */
export const TOGETHER: string[][] = [['test/deploy/compiled.test.ts', 'test/scripts/start.test.ts']];

export const TIMES_FILE = 'test/support/file-times.json';

/** Every `*.test.ts` under `dir`, relative to `root`, sorted (the order mocha's glob gives). */
export function testFiles(root: string, dir = 'test'): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const p = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.test.ts')) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

export function readTimes(file: string): Record<string, number> {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] >= 0));
  } catch {
    return {};
  }
}

/** Longest-processing-time-first: `n` lists of files whose summed times are as even as this rule gets. */
export function planShards(files: string[], times: Record<string, number>, n: number, together: string[][] = TOGETHER): string[][] {
  const known = files.map((f) => times[f]).filter((t): t is number => t !== undefined).sort((a, b) => a - b);
  const median = known.length ? known[Math.floor(known.length / 2)] : 1;
  const cost = (f: string) => times[f] ?? median;
  const units: string[][] = [];
  const grouped = new Set<string>();
  for (const g of together) {
    const present = g.filter((f) => files.includes(f));
    if (present.length) units.push(present);
    for (const f of present) grouped.add(f);
  }
  for (const f of files) if (!grouped.has(f)) units.push([f]);
  const unitCost = (u: string[]) => u.reduce((s, f) => s + cost(f), 0);
  units.sort((a, b) => unitCost(b) - unitCost(a) || a[0].localeCompare(b[0]));
  const shards = Array.from({ length: Math.max(1, n) }, () => ({ files: [] as string[], total: 0 }));
  for (const u of units) {
    const least = shards.reduce((m, s) => (s.total < m.total ? s : m));
    least.files.push(...u);
    least.total += unitCost(u);
  }
  return shards.map((s) => s.files.sort()).filter((s) => s.length > 0);
}

/**
 * `VH_TEST_SHARDS` (1 turns sharding off), else 3: with two the cores were idle a fifth of the
 * time (tests waiting on timers, real-time feeds, players); three ran the suite in 875 s
 * instead of 1,039 s on this 2-core machine.
 */
export const DEFAULT_SHARDS = 3;
export function shardCount(env: NodeJS.ProcessEnv): number {
  const n = Number(env.VH_TEST_SHARDS ?? DEFAULT_SHARDS);
  return Number.isInteger(n) && n >= 1 && n <= 8 ? n : DEFAULT_SHARDS;
}

/** Merges the shards' `file-times.<k>.json` into one map, slowest first. */
export function mergeTimes(parts: Array<Record<string, number>>): Record<string, number> {
  const all = Object.assign({}, ...parts) as Record<string, number>;
  return Object.fromEntries(Object.entries(all).sort((a, b) => b[1] - a[1]));
}
