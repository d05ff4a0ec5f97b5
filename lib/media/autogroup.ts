// Niceness that holds under the kernel's autogroup scheduling (Linux, `kernel.sched_autogroup_enabled`).
//
// With autogroups, the CPU is shared fairly between *sessions* first, and a process's nice value
// only weighs against the other processes of its own session. bwrap runs each sandboxed ffmpeg in
// a new session (`--new-session`), so each has an autogroup of its own at nice 0: `nice -n 10` on
// a VOD encode then changes nothing against a just-in-time cut a viewer waits for, or a live
// encode (measured: a seek's cut took 2–3× its time alone while the ladder encoded behind
// `ready`). The autogroup's own nice (`/proc/<pid>/autogroup`) is what counts: it is raised here to
// the run's niceness once the sandbox's session exists. Raising it needs no privilege; nothing is
// done where autogroups are off or absent (a process in a CPU cgroup, as in a container, is
// scheduled by its cgroup, where plain nice works).
import { readFileSync, writeFileSync } from 'node:fs';

let enabled: boolean | undefined;

function autogroupsOn(): boolean {
  if (enabled === undefined) {
    try {
      enabled = readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1';
    } catch {
      enabled = false;
    }
  }
  return enabled;
}

const read = (file: string): string | null => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

/** `/proc/<pid>/autogroup` reads "/autogroup-<id> nice <n>": the id. */
const groupOf = (pid: number): string | null => read(`/proc/${pid}/autogroup`)?.split(' ')[0] ?? null;

/**
 * Whether `pid` is stopped (or gone): the state letter after the command name in
 * `/proc/<pid>/stat`. A process stopped by SIGSTOP has left any fork it was in, so its children
 * are all listed by `below` from then on.
 */
export function stoppedOrGone(pid: number): boolean {
  const stat = read(`/proc/${pid}/stat`);
  if (stat === null) return true;
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state === 'T' || state === 't' || state === 'Z' || state === 'X';
}

/** The processes below `pid` (children's children included), breadth first; [] off Linux. */
export function below(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length && out.length < 64) {
    const p = queue.shift()!;
    for (const c of (read(`/proc/${p}/task/${p}/children`) ?? '').split(' ').filter(Boolean).map(Number)) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

/**
 * Gives the autogroups under `pid` (the sandbox's session, once bwrap made it) the niceness
 * `nice`: polled for a moment after the spawn, as bwrap sets the session up in its child.
 * Best effort: returns whether a group was set (tests read it).
 */
export async function niceAutogroups(pid: number, nice: number, opts: { withinMs?: number } = {}): Promise<boolean> {
  if (!(nice > 0) || !autogroupsOn()) return false;
  const own = groupOf(pid);
  if (own === null) return false;
  const deadline = Date.now() + (opts.withinMs ?? 2000);
  while (Date.now() < deadline) {
    if (read(`/proc/${pid}/stat`) === null) return false;
    const other = below(pid).find((c) => {
      const g = groupOf(c);
      return g !== null && g !== own;
    });
    if (other !== undefined) {
      try {
        writeFileSync(`/proc/${other}/autogroup`, String(nice));
        return true;
      } catch {
        return false;
      }
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return false;
}
