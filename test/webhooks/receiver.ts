import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  at: number;
}

export type Reply = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/** A webhook receiver on loopback that records every request and answers as `reply` says. */
export interface Receiver {
  url: string;
  received: Received[];
  /** Requests about one video (the stack's workspace shares endpoints across tests). */
  forVideo(videoId: string): Received[];
  close(): Promise<void>;
}

export async function startReceiver(reply: (req: Received, seen: Received[]) => Reply = () => ({ status: 204 })): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        /* recorded as text */
      }
      const r: Received = { path: req.url ?? '', headers: req.headers, body, json, at: Date.now() };
      received.push(r);
      const answer = reply(r, received);
      if (answer === 'hang') return;
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    forVideo: (videoId) => received.filter((r) => r.json?.data?.video?.id === videoId),
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * Standard Webhooks verification, written from the specification rather than taken from the code
 * under test: the key is the base64 after `whsec_`; the signed content is `<id>.<timestamp>.<body>`;
 * the header is a space-separated list of `v1,<base64 HMAC-SHA256>`; the timestamp must be recent.
 */
export function verifyStandardWebhook(secret: string, headers: http.IncomingHttpHeaders, body: string, toleranceSeconds = 300): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(Math.floor(Date.now() / 1000) - Number(timestamp)) > toleranceSeconds) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, sig] = entry.split(',');
    if (version !== 'v1' || !sig) return false;
    const given = Buffer.from(sig, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
