/**
 * The on-demand image renders of one API process (issue 22 item 8): a bounded queue with two
 * lanes. Anonymous requests (a public id, no credential) may hold at most
 * `anonymousConcurrency` of the `concurrency` ffmpeg slots, so the rest is always free for
 * requests that carry a playback token or the workspace's API key; each lane's queue holds at
 * most `queueMax` jobs (beyond: refused with a Retry-After), and a job's time limit runs from
 * the moment it is queued, so a job never waits longer than `timeoutMs` in all.
 */
export interface RenderLimits {
  concurrency: number;
  anonymousConcurrency: number;
  queueMax: number;
  timeoutMs: number;
  perAddressPerMinute: number;
  perVideoPerMinute: number;
  failureCacheMs: number;
  derivedMaxBytesPerVideo: number;
}

export type Lane = 'keyed' | 'anonymous';

export type RefusalReason = 'over_budget' | 'queue_full' | 'timeout' | 'failed' | 'unavailable';

/** A render that was not (or could not be) made; the API answers 429/503 with Retry-After. */
export class RenderRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    readonly retryAfterSeconds: number,
    message: string,
  ) {
    super(message);
  }
}

interface Waiter {
  start(): void;
}

const LANES: Lane[] = ['keyed', 'anonymous'];

export class RenderQueue {
  private readonly active: Record<Lane, number> = { keyed: 0, anonymous: 0 };
  private readonly waiting: Record<Lane, Waiter[]> = { keyed: [], anonymous: [] };
  /** Moving average of a render's time, for Retry-After. */
  private averageMs = 2000;

  constructor(private readonly limits: Pick<RenderLimits, 'concurrency' | 'anonymousConcurrency' | 'queueMax' | 'timeoutMs'>) {}

  stats(): { active: Record<Lane, number>; queued: Record<Lane, number> } {
    return { active: { ...this.active }, queued: { keyed: this.waiting.keyed.length, anonymous: this.waiting.anonymous.length } };
  }

  /** Seconds until a job queued now would probably have run: the work ahead over the slots. */
  retryAfter(lane: Lane): number {
    const ahead = this.waiting[lane].length + this.active.keyed + this.active.anonymous;
    return Math.min(60, Math.max(1, Math.ceil(((ahead + 1) * this.averageMs) / 1000 / this.limits.concurrency)));
  }

  private canStart(lane: Lane): boolean {
    if (this.active.keyed + this.active.anonymous >= this.limits.concurrency) return false;
    return lane === 'keyed' || this.active.anonymous < this.limits.anonymousConcurrency;
  }

  private dispatch(): void {
    for (const lane of LANES) {
      while (this.waiting[lane].length > 0 && this.canStart(lane)) {
        this.active[lane]++;
        this.waiting[lane].shift()!.start();
      }
    }
  }

  /** Runs `fn` in a slot of `lane`; `signal` aborts at `timeoutMs` after this call. */
  async run<T>(lane: Lane, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const signal = AbortSignal.timeout(this.limits.timeoutMs);
    if (this.waiting[lane].length === 0 && this.canStart(lane)) {
      this.active[lane]++;
    } else {
      if (this.waiting[lane].length >= this.limits.queueMax) {
        throw new RenderRefused('queue_full', this.retryAfter(lane), `The render queue is full (${this.limits.queueMax} waiting); retry later`);
      }
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          start: () => {
            signal.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        const onAbort = () => {
          const i = this.waiting[lane].indexOf(waiter);
          if (i >= 0) this.waiting[lane].splice(i, 1);
          reject(new RenderRefused('timeout', this.retryAfter(lane), `The render waited ${this.limits.timeoutMs} ms for a slot; retry later`));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        this.waiting[lane].push(waiter);
      });
    }
    const t0 = Date.now();
    try {
      const out = await fn(signal);
      this.averageMs = this.averageMs * 0.8 + (Date.now() - t0) * 0.2;
      return out;
    } finally {
      this.active[lane]--;
      this.dispatch();
    }
  }
}

/**
 * Fixed one-minute windows per key (an address, a video): renders that missed the cache, per
 * process. `take` counts one if the key has budget left.
 */
export class RenderBudget {
  private readonly windows = new Map<string, { start: number; used: number }>();

  constructor(private readonly windowMs = 60_000) {}

  take(key: string, limit: number, now = Date.now()): { ok: true } | { ok: false; retryAfterSeconds: number } {
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.windowMs) {
      if (this.windows.size > 10_000) for (const [k, v] of this.windows) if (now - v.start >= this.windowMs) this.windows.delete(k);
      w = { start: now, used: 0 };
      this.windows.set(key, w);
    }
    if (w.used >= limit) return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000)) };
    w.used++;
    return { ok: true };
  }

  refund(key: string): void {
    const w = this.windows.get(key);
    if (w && w.used > 0) w.used--;
  }
}
