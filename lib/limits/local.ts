import type { Decision, Limiter } from './types';

/**
 * `limit` per `windowMs` per key in this process's memory alone: the fallback a caller uses when
 * the shared limiter (Postgres leases, Redis) cannot decide in time. Per process, so N API
 * processes admit at most N × `limit` while the shared store is slow or away.
 */
export class LocalLimiter {
  private window = 0;
  private counts = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {}

  consume(key: string, now = Date.now()): Decision {
    const windowStart = Math.floor(now / this.windowMs) * this.windowMs;
    if (windowStart !== this.window) {
      this.window = windowStart;
      this.counts.clear();
    }
    const n = this.counts.get(key) ?? 0;
    const allowed = n < this.limit;
    if (allowed) this.counts.set(key, n + 1);
    return { allowed, limit: this.limit, remaining: Math.max(0, this.limit - n - (allowed ? 1 : 0)), resetAt: windowStart + this.windowMs };
  }
}

/**
 * The shared limiter's decision if it comes within `waitMs`, else the local fallback's (the shared
 * one still spends its token when its answer arrives: strict, never lenient, on that side).
 */
export async function consumeWithin(shared: Limiter, local: LocalLimiter, key: string, waitMs: number): Promise<Decision> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), waitMs);
  });
  const decision = shared.consume(key).catch(() => undefined);
  try {
    return (await Promise.race([decision, late])) ?? local.consume(key);
  } finally {
    clearTimeout(timer);
  }
}
