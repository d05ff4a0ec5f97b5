import { UrlNotAllowedError } from '../net/guard';
import { safeRequest } from '../net/request';
import { parseRetryAfter } from './retry';

export const RESPONSE_BODY_LIMIT = 1024;

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  /** Truncated to RESPONSE_BODY_LIMIT bytes. */
  responseBody: string | null;
  error: string | null;
  retryAfterMs: number | null;
}

/** Reads at most `limit` bytes, then lets the rest go. */
async function readHead(body: AsyncIterable<Buffer> & { destroy(): void }, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) break;
  }
  body.destroy();
  // Cut on bytes, then drop a split UTF-8 sequence at the end rather than store a broken character.
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8').replace(/\uFFFD+$/, '');
}

/**
 * One delivery attempt. Never throws for the receiver's failures (refused address, timeout, reset,
 * non-2xx): those are the outcome. Redirects are not followed; a 3xx is a failure.
 */
export async function sendWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { timeoutMs: number; allowLoopback: boolean },
): Promise<SendResult> {
  // `timeout` on the socket only catches idleness; this bounds the whole exchange.
  const signal = AbortSignal.timeout(opts.timeoutMs);
  try {
    const res = await safeRequest(url, { method: 'POST', headers, body, timeoutMs: opts.timeoutMs, maxRedirects: 0, allowLoopback: opts.allowLoopback, signal });
    const responseBody = await readHead(res.body, RESPONSE_BODY_LIMIT).catch(() => null);
    const ok = res.status >= 200 && res.status < 300;
    const retryAfter = res.headers['retry-after'];
    return {
      ok,
      statusCode: res.status,
      responseBody,
      error: ok ? null : `HTTP ${res.status}${res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : ''}`,
      retryAfterMs: ok ? null : parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, Date.now()),
    };
  } catch (err) {
    const message = signal.aborted
      ? `no response within ${opts.timeoutMs} ms`
      : err instanceof UrlNotAllowedError
        ? `url_not_allowed: ${err.message}`
        : (err as Error).message;
    return { ok: false, statusCode: null, responseBody: null, error: message.slice(0, 500), retryAfterMs: null };
  }
}
