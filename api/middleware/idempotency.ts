import { createHash } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Db } from '../../lib/db';
import { ApiError, badRequest, conflict } from '../errors';

/** Keys live 24 h (SPEC §16). A claim whose request never finished (a crash) frees itself after this. */
const TTL = "interval '24 hours'";
const LOCK = "interval '5 minutes'";
// Per-request answers that must never be replayed as they were.
const FRESH_HEADERS = /^(x-request-id|x-ratelimit-.*|retry-after|content-length|date|connection|keep-alive|transfer-encoding)$/i;

/** Key order does not change what a JSON body means, so it does not change the fingerprint. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
  return value;
}

/**
 * Answers are kept for replay, but the secrets in them are not (issue 22): an API key's or a
 * webhook's `secret` is stored, and so replayed, as `[redacted]`. A client whose first answer was
 * lost gets the id, and revokes or rotates it (docs/api.md, "Idempotency").
 */
export const REDACTED_SECRET = '[redacted]';
function withoutSecrets(value: unknown): { value: unknown; redacted: boolean } {
  let redacted = false;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(
      Object.entries(v).map(([k, x]) => {
        if (k === 'secret' && typeof x === 'string') {
          redacted = true;
          return [k, REDACTED_SECRET];
        }
        return [k, walk(x)];
      }),
    );
  };
  const out = walk(value);
  return { value: out, redacted };
}

const fingerprintOf = (method: string, path: string, body: unknown) =>
  createHash('sha256').update(JSON.stringify([method, path, canonical(body ?? null)])).digest('hex');

interface Row {
  fingerprint: string;
  state: 'running' | 'done';
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: unknown;
}

/**
 * `Idempotency-Key` on POST, with Stripe's semantics (SPEC §16). The first request claims the
 * key with an insert, so of many identical requests at once exactly one runs; the others get
 * 409 `idempotency_key_in_use` while it runs and its answer (`Idempotent-Replayed: true`) after.
 * The same key with another method, path or body → 422 `idempotency_key_reused`. Keys are the
 * workspace's. Only answers are kept: a request that fails (4xx/5xx) releases its key, since it
 * changed nothing and the client may correct it and retry under the same key.
 *
 * `requestOf` says what identifies a request whose body is not JSON (tus: its Upload-Length and
 * Upload-Metadata headers; the bytes of a creation-with-upload are not part of it). An empty text
 * answer (a tus 201) is kept like a JSON one.
 */
export function idempotency(db: Db, opts: { requestOf?: (ctx: Context) => unknown } = {}): Middleware {
  return async (ctx, next) => {
    const key = ctx.get('idempotency-key');
    const auth = ctx.state.auth;
    if (ctx.method !== 'POST' || !key || !auth) return next();
    if (key.length > 255) throw badRequest('invalid_idempotency_key', 'Idempotency-Key must be at most 255 characters');
    const fingerprint = fingerprintOf(ctx.method, ctx.path, opts.requestOf ? opts.requestOf(ctx) : ctx.state.body);
    const where = { workspace_id: auth.workspaceId, key };

    // Claims a new key, or one that expired or whose request died, in one statement.
    const { rows: claimed } = await db.raw(
      `insert into idempotency_keys (workspace_id, key, fingerprint, state, locked_until)
       values (?, ?, ?, 'running', now() + ${LOCK})
       on conflict (workspace_id, key) do update
         set fingerprint = excluded.fingerprint, state = 'running', created_at = now(), locked_until = excluded.locked_until,
             response_status = null, response_headers = null, response_body = null
         where idempotency_keys.created_at < now() - ${TTL}
            or (idempotency_keys.state = 'running' and idempotency_keys.locked_until < now())
       returning key`,
      [auth.workspaceId, key, fingerprint],
    );
    if (Math.random() < 0.01) void db('idempotency_keys').whereRaw(`created_at < now() - ${TTL}`).delete().catch(() => undefined);

    if (!claimed.length) {
      const row: Row | undefined = await db('idempotency_keys').where(where).first();
      if (!row) throw conflict('idempotency_key_in_use', 'A request with this Idempotency-Key is being processed; retry shortly');
      if (row.fingerprint !== fingerprint) {
        throw new ApiError(422, 'idempotency_key_reused', 'This Idempotency-Key was used with another request (method, path or body); use a new key');
      }
      if (row.state === 'running') throw conflict('idempotency_key_in_use', 'A request with this Idempotency-Key is being processed; retry shortly');
      for (const [name, value] of Object.entries(row.response_headers ?? {})) ctx.set(name, value);
      ctx.set('Idempotent-Replayed', 'true');
      ctx.status = row.response_status!;
      ctx.body = row.response_body ?? undefined;
      if (row.response_status === 204) ctx.body = null;
      return;
    }

    const release = () => db('idempotency_keys').where({ ...where, fingerprint, state: 'running' }).delete();
    try {
      await next();
    } catch (err) {
      await release().catch(() => undefined);
      throw err;
    }
    const body = ctx.body;
    const storable = ctx.status < 400 && (body === undefined || body === null || body === '' || (typeof body === 'object' && !Buffer.isBuffer(body) && typeof (body as { pipe?: unknown }).pipe !== 'function'));
    if (!storable) {
      await release();
      return;
    }
    const kept = withoutSecrets(body);
    const headers: Record<string, string> = Object.fromEntries(
      Object.entries(ctx.response.headers)
        .filter(([name]) => !FRESH_HEADERS.test(name))
        .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]),
    );
    if (kept.redacted) headers['idempotent-redacted'] = 'secret';
    await db('idempotency_keys')
      .where({ ...where, fingerprint })
      .update({ state: 'done', response_status: ctx.status, response_headers: JSON.stringify(headers), response_body: body === undefined ? null : JSON.stringify(kept.value) });
  };
}
