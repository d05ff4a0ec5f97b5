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
  /** True when `key` is known to be out of budget; answered without spending (and cheaply). */
  blocked(key: string): Promise<boolean>;
  close(): Promise<void>;
}
