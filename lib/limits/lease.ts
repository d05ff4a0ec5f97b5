import type { Db } from '../db';
import type { Decision, Limiter } from './types';

interface Lease {
  /** Tokens this process holds for the window and has not spent. */
  tokens: number;
  /** Tokens every process together has taken from the row (as of our last lease). */
  taken: number;
  exhausted: boolean;
  pending?: Promise<void>;
  /** Tokens granted by the last lease; a quarter of it left starts the next one early. */
  granted: number;
}

/** Lease size: a share of what is left, so near the limit processes take one at a time. */
export function leaseSize(limit: number, taken: number): number {
  return Math.max(1, Math.min(1000, Math.floor((limit - taken) / 8)));
}

/**
 * Exact across processes without a Postgres write per request: each process leases blocks of
 * tokens from the window's row in `rate_limits` with one atomic upsert, spends them in memory,
 * and leases again when they run out. The row is the sum of what was handed out, so all
 * processes together never admit more than `limit` in a window (a leased token left unspent at
 * the window's end is lost, which only errs on the strict side). Once the row is spent a process
 * answers 429 from memory until the window ends. A busy process asks for its next lease when a
 * quarter of the last one is left, so requests rarely wait on the upsert.
 */
export class LeaseLimiter implements Limiter {
  private leases = new Map<string, Lease>();
  private window = 0;

  constructor(
    private readonly db: Db,
    private readonly limit: number,
    private readonly prefix = '',
    private readonly windowMs = 60_000,
  ) {}

  private current(key: string, now: number): { lease: Lease; windowStart: number } {
    const windowStart = Math.floor(now / this.windowMs) * this.windowMs;
    if (windowStart !== this.window) {
      this.window = windowStart;
      this.leases.clear();
      void this.sweep(windowStart);
    }
    let lease = this.leases.get(key);
    if (!lease) this.leases.set(key, (lease = { tokens: 0, taken: 0, exhausted: false, granted: 0 }));
    return { lease, windowStart };
  }

  async consume(key: string): Promise<Decision> {
    const { lease, windowStart } = this.current(key, Date.now());
    for (;;) {
      if (lease.tokens > 0) return this.spend(key, lease, windowStart);
      if (lease.exhausted) return { allowed: false, limit: this.limit, remaining: 0, resetAt: windowStart + this.windowMs };
      lease.pending ??= this.take(key, lease, windowStart).finally(() => (lease.pending = undefined));
      await lease.pending;
    }
  }

  /** A token this process already holds, spent exactly as `consume` spends it; undefined when none is held. */
  consumeNow(key: string): Decision | undefined {
    const { lease, windowStart } = this.current(key, Date.now());
    return lease.tokens > 0 ? this.spend(key, lease, windowStart) : undefined;
  }

  private spend(key: string, lease: Lease, windowStart: number): Decision {
    lease.tokens--;
    // Lease ahead, so a busy key's requests never queue behind the upsert. Only for big
    // leases: near the limit (leases of one) a process must not hold tokens others could use.
    if (lease.granted >= 8 && lease.tokens < lease.granted / 4 && !lease.pending && !lease.exhausted) {
      lease.pending = this.take(key, lease, windowStart)
        .catch(() => undefined) // the next request that finds no token asks again, and waits
        .finally(() => (lease.pending = undefined));
    }
    return { allowed: true, limit: this.limit, remaining: Math.max(0, this.limit - lease.taken) + lease.tokens, resetAt: windowStart + this.windowMs };
  }

  async blocked(key: string): Promise<boolean> {
    const { lease } = this.current(key, Date.now());
    return lease.exhausted && lease.tokens === 0;
  }

  /** The row counts tokens asked for; what was granted is what fitted under the limit. */
  private async take(key: string, lease: Lease, windowStart: number): Promise<void> {
    const want = leaseSize(this.limit, lease.taken);
    const { rows } = await this.db.raw(
      `insert into rate_limits (key_id, window_start, count) values (?, to_timestamp(? / 1000.0), ?)
       on conflict (key_id, window_start) do update set count = rate_limits.count + excluded.count
       returning count`,
      [this.prefix + key, windowStart, want],
    );
    const before = Number(rows[0].count) - want;
    const granted = Math.max(0, Math.min(want, this.limit - before));
    lease.tokens += granted;
    lease.granted = granted;
    lease.taken = Math.min(this.limit, before + want);
    if (granted < want || lease.taken >= this.limit) lease.exhausted = true;
  }

  private async sweep(windowStart: number): Promise<void> {
    await this.db('rate_limits')
      .where('window_start', '<', new Date(windowStart - 2 * this.windowMs))
      .delete()
      .catch(() => undefined);
  }

  async close(): Promise<void> {}
}
