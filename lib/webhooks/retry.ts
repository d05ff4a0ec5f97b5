/** The longest a receiver's Retry-After may push an attempt back. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (!value) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Date.parse is lenient ("-5" is a year); an HTTP date always names its weekday and month.
  const at = /[a-z]{3}/i.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/** The schedule's delay, or the receiver's Retry-After when that is longer (capped at 24 h). */
export function retryDelay(scheduleMs: number, retryAfterMs: number | null): number {
  if (retryAfterMs === null) return scheduleMs;
  return Math.max(scheduleMs, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}
