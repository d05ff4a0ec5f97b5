import { say, warn } from './log';
import { type Child, describeExit, type ExitStatus, sleep } from './proc';

/**
 * Keeps scripts/start's children running: a child that dies is started again by its own `start`
 * (never by re-deciding what to run), after a backoff that doubles while it keeps dying soon after
 * each start; `stop` ends every child, newest first, whatever state it is in.
 */

export interface ChildSpec {
  name: string;
  /** Starts the process and resolves once it serves (a health wait belongs here); throws if it can't. */
  start(): Promise<Child>;
  /** What asks it to stop (default SIGTERM; Postgres: SIGINT, its fast shutdown). */
  stopSignal?: NodeJS.Signals;
  /** How long it may take to stop before its process group is killed (default 20 s). */
  stopTimeoutMs?: number;
}

export interface Clock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export interface SupervisorOptions {
  /** A child that ran this long before dying is restarted after the first delay again (default 30 s). */
  healthyRunMs?: number;
  /** The longest wait between two restarts (default 30 s). */
  maxBackoffMs?: number;
  firstBackoffMs?: number;
  clock?: Clock;
  log?: { say(msg: string): void; warn(msg: string): void };
}

interface Entry {
  spec: ChildSpec;
  child: Child;
  startedAt: number;
  backoffMs: number;
  crashes: number;
  /** A restart under way (its start may be waiting on health). */
  starting?: Promise<Child | undefined>;
  watching: Promise<void>;
}

const realClock: Clock = { now: () => Date.now(), sleep };

/** A child whose start failed: it "exits" at once, so the restart loop backs off and tries again. */
const failedStart = (): Child => ({ pid: -1, exited: Promise.resolve({ code: null, signal: null }), signal() {} });

export class Supervisor {
  private readonly entries: Entry[] = [];
  private readonly abort = new AbortController();
  private stopped?: Promise<void>;
  private readonly opts: Required<SupervisorOptions>;
  private resolveDone!: () => void;
  /** Resolves once `stop` has stopped every child. */
  readonly done = new Promise<void>((r) => (this.resolveDone = r));

  constructor(opts: SupervisorOptions = {}) {
    this.opts = { healthyRunMs: 30_000, maxBackoffMs: 30_000, firstBackoffMs: 1000, clock: realClock, log: { say, warn }, ...opts };
  }

  get stopping(): boolean {
    return this.abort.signal.aborted;
  }

  /** The children's current pids by name (tests and the banner). */
  pids(): Record<string, number> {
    return Object.fromEntries(this.entries.map((e) => [e.spec.name, e.child.pid]));
  }

  /** Starts a child (throws if its first start fails) and restarts it whenever it dies. */
  async add(spec: ChildSpec): Promise<void> {
    if (this.stopping) return;
    const child = await spec.start();
    const entry: Entry = { spec, child, startedAt: this.opts.clock.now(), backoffMs: this.opts.firstBackoffMs, crashes: 0, watching: Promise.resolve() };
    this.entries.push(entry);
    if (this.stopping) return void (await this.stopEntry(entry));
    entry.watching = this.watch(entry);
  }

  private async watch(e: Entry): Promise<void> {
    const { clock, log } = this.opts;
    for (;;) {
      const status = await e.child.exited;
      if (this.stopping) return;
      // Leftovers in its process group (ffmpeg under a killed worker, postgres backends) go with it.
      e.child.signal('SIGTERM', true);
      const delay = this.nextDelay(e);
      log.warn(this.deathMessage(e, status, delay));
      await clock.sleep(delay, this.abort.signal);
      if (this.stopping) return;
      e.starting = e.spec.start().catch((err: Error) => {
        log.warn(`${e.spec.name} could not start again: ${err.message}`);
        return undefined;
      });
      const child = await e.starting;
      e.starting = undefined;
      e.child = child ?? failedStart();
      e.startedAt = clock.now();
      if (this.stopping) return;
      if (child) log.say(`${e.spec.name} started again (pid ${child.pid})`);
    }
  }

  /** The wait before the next start: doubles while the child keeps dying within healthyRunMs of its start. */
  private nextDelay(e: Entry): number {
    const ran = this.opts.clock.now() - e.startedAt;
    if (ran >= this.opts.healthyRunMs) {
      e.backoffMs = this.opts.firstBackoffMs;
      e.crashes = 0;
    }
    e.crashes += 1;
    const delay = e.backoffMs;
    e.backoffMs = Math.min(delay * 2, this.opts.maxBackoffMs);
    return delay;
  }

  private deathMessage(e: Entry, status: ExitStatus, delay: number): string {
    const ran = Math.floor((this.opts.clock.now() - e.startedAt) / 1000);
    const secs = `${Math.round(delay / 100) / 10}s`;
    const loop = e.crashes > 1 ? `; crash loop: ${e.crashes} deaths, each within ${this.opts.healthyRunMs / 1000}s of its start` : '';
    const how = e.child.pid > 0 ? `${e.spec.name} (pid ${e.child.pid}) died after ${ran}s (${describeExit(status)})` : `${e.spec.name} failed to start`;
    return `${how}${loop}; restarting in ${secs} (see its output above)`;
  }

  /** Stops every child, newest first; idempotent. */
  stop(): Promise<void> {
    if (!this.stopped) {
      this.abort.abort();
      this.stopped = (async () => {
        for (const e of [...this.entries].reverse()) await this.stopEntry(e);
        await Promise.all(this.entries.map((e) => e.watching));
        this.resolveDone();
      })();
    }
    return this.stopped;
  }

  private async stopEntry(e: Entry): Promise<void> {
    const started = e.starting ? await e.starting : undefined;
    for (const child of new Set([e.child, ...(started ? [started] : [])])) await stopChild(child, e.spec, this.opts.log);
  }
}

/** Asks a child to stop, waits for it, kills its process group after the timeout; then ends its group's leftovers. */
export async function stopChild(child: Child, spec: Pick<ChildSpec, 'name' | 'stopSignal' | 'stopTimeoutMs'>, log = { say, warn }): Promise<void> {
  if (child.pid <= 0) return;
  const timeoutMs = spec.stopTimeoutMs ?? 20_000;
  let exited = false;
  void child.exited.then(() => (exited = true));
  await Promise.resolve();
  if (!exited) {
    log.say(`stopping ${spec.name} (pid ${child.pid})`);
    child.signal(spec.stopSignal ?? 'SIGTERM');
    const timer = new AbortController();
    const timedOut = await Promise.race([child.exited.then(() => false), sleep(timeoutMs, timer.signal).then(() => true)]);
    timer.abort();
    if (timedOut) {
      log.warn(`${spec.name} did not stop within ${timeoutMs / 1000}s, killing it`);
      child.signal('SIGKILL', true);
      child.signal('SIGKILL');
      await child.exited;
    }
  }
  child.signal('SIGTERM', true);
}
