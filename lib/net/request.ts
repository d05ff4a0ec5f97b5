import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Readable } from 'node:stream';
import { guardedLookup, isAllowedAddress, parsePublicUrl, UrlNotAllowedError } from './guard';

export interface SafeRequestOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs: number;
  /** 0 = redirects are returned, not followed. */
  maxRedirects?: number;
  allowLoopback?: boolean;
  signal?: AbortSignal;
}

export interface SafeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Readable;
  url: string;
}

/**
 * An outbound HTTP request that only reaches public addresses, on every hop: each redirect is
 * parsed, and each connection's resolved IP is checked (SPEC §4, §9).
 */
export async function safeRequest(target: string, opts: SafeRequestOptions): Promise<SafeResponse> {
  const allowLoopback = opts.allowLoopback ?? false;
  let url = parsePublicUrl(target);
  for (let hop = 0; ; hop++) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) && !isAllowedAddress(host, allowLoopback)) throw new UrlNotAllowedError(`${host} is not a public address`);
    const res = await once(url, opts, allowLoopback);
    const location = res.headers.location;
    if (res.status >= 300 && res.status < 400 && location && (opts.maxRedirects ?? 0) > 0) {
      res.body.resume();
      if (hop >= (opts.maxRedirects ?? 0)) throw new UrlNotAllowedError(`more than ${opts.maxRedirects} redirects`);
      url = parsePublicUrl(new URL(location, url).toString());
      continue;
    }
    return res;
  }
}

function once(url: URL, opts: SafeRequestOptions, allowLoopback: boolean): Promise<SafeResponse> {
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      url,
      {
        method: opts.method ?? 'GET',
        headers: opts.headers,
        lookup: guardedLookup(allowLoopback) as never,
        signal: opts.signal,
        timeout: opts.timeoutMs,
        agent: false,
      },
      (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res, url: url.toString() }),
    );
    req.on('timeout', () => req.destroy(new Error(`no response within ${opts.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}
