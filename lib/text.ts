/**
 * The one rule for NUL bytes (issue 22): Postgres cannot store U+0000 in text or jsonb, and no
 * name, title or query needs it, so every string that enters through a body, a query string or
 * tus metadata is checked here and refused with 400 `invalid_request` (api/middleware/validate.ts).
 */
export function nulField(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path || '(value)' : null;
  if (!value || typeof value !== 'object') return null;
  for (const [k, v] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const field = path ? `${path}.${k}` : String(k);
    if (String(k).includes('\u0000')) return field;
    const found = nulField(v, field);
    if (found) return found;
  }
  return null;
}

/**
 * Text Postgres can store: no NUL and no unpaired UTF-16 surrogate (`\ud800` parses in JSON but
 * serialises back as an escape that jsonb and text refuse: "unsupported Unicode escape sequence").
 * The beacon schema (lib/analytics/events.ts) applies it to every string of an event, so one
 * such beacon is a 400 at the door rather than a batch insert that fails.
 */
const UNSTORABLE = /[\0\p{Cs}]/u;
export function storableText(s: string): boolean {
  return !UNSTORABLE.test(s);
}
