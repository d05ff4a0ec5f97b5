// What every area module of the configuration shares: explicit env parsing helpers.
import { z } from 'zod';

/** The parsed variables of one area's shape (each area module declares its own). */
export type EnvOf<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>;

// Env strings are parsed explicitly: Boolean('false') === true is the classic trap.
export const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** Development only: the secret behind every key a fresh checkout needs (refused in production). */
export const DEV_SECRET = 'dev-only-insecure-secret-change-me';

const durations: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
/** "5s,5m,2h" → milliseconds. */
export function parseDurationList(text: string): number[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(s);
      if (!m) throw new Error(`bad duration "${s}" (use e.g. 500ms, 5s, 5m, 2h)`);
      return Math.round(Number(m[1]) * durations[m[2]]);
    });
}

export function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !(o instanceof Uint8Array)) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
