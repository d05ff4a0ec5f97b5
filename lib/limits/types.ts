/** One request's answer from a fixed-budget limiter: `limit` per `windowMs` per key. */
export interface Decision {
  allowed: boolean;
  limit: number;
  /** What this key may still spend in the window (an upper bound when budgets are leased). */
  remaining: number;
  /** When the window ends, epoch ms. */
  resetAt: number;
}

export interface Limiter {
  consume(key: string): Promise<Decision>;
  /**
   * A request admitted from memory alone, its token spent as `consume` would spend it; undefined
   * (nothing spent) when deciding needs a round trip or would refuse, so the caller takes the
   * path that awaits `consume`. Absent where every decision is a round trip (Redis).
   */
  consumeNow?(key: string): Decision | undefined;
  /** True when `key` is known to be out of budget; answered without spending (and cheaply). */
  blocked(key: string): Promise<boolean>;
  close(): Promise<void>;
}
