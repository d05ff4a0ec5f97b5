import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { FaultStack, Proc } from './stack';
import { sleep } from './flow';

/** One request a receiver saw, and whether its signature verified with `standardwebhooks`. */
export interface Seen {
  id: string;
  type: string;
  videoId: string;
  verified: boolean;
  answered: number | 'dropped';
}

export interface HookReceiver {
  url: string;
  seen: Seen[];
  /** While down, the receiver answers 503 to everything (as a receiver behind a dead backend does). */
  down: boolean;
  /** Stops listening (connections refused) until `listen()`, on the same port. */
  unlisten(): Promise<void>;
  listen(): Promise<void>;
  /** Called with each request before it is answered; return 'drop' to leave it unanswered. */
  onRequest?: (s: Seen) => 'drop' | void | Promise<'drop' | void>;
  setSecret(secret: string): void;
  close(): Promise<void>;
}

/** A webhook receiver on loopback that verifies each request with the independent `standardwebhooks` library. */
export async function startHookReceiver(): Promise<HookReceiver> {
  let verifier: Webhook | undefined;
  const rx: HookReceiver = {
    url: '',
    seen: [],
    down: false,
    setSecret: (secret) => (verifier = new Webhook(secret)),
    close: async () => undefined,
    unlisten: async () => undefined,
    listen: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = false;
      try {
        verifier!.verify(body, req.headers as Record<string, string>);
        verified = true;
      } catch {
        /* recorded as unverified */
      }
      let json: any = {};
      try {
        json = JSON.parse(body);
      } catch {
        /* not JSON */
      }
      const s: Seen = { id: String(req.headers['webhook-id']), type: json.type, videoId: json.data?.video?.id, verified, answered: 'dropped' };
      rx.seen.push(s);
      if ((await rx.onRequest?.(s)) === 'drop') return;
      s.answered = rx.down ? 503 : 204;
      res.writeHead(s.answered);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  rx.url = `http://127.0.0.1:${port}/hook`;
  rx.unlisten = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  rx.listen = () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  rx.close = async () => {
    if (server.listening) await rx.unlisten();
  };
  return rx;
}

/** Registers the receiver for every event of the stack's workspace. */
export async function subscribe(s: FaultStack, rx: HookReceiver): Promise<string> {
  const r = await s.call('POST', '/v1/webhooks', { url: rx.url });
  if (r.status !== 201) throw new Error(`webhook endpoint: ${r.status} ${JSON.stringify(r.body)}`);
  rx.setSecret(r.body.secret);
  return r.body.id;
}

/**
 * Every event of the workspace (from Postgres) reached the receiver with a 2xx, at most once as a
 * success per webhook-id; returns the number of extra requests (retries with the same id).
 */
export async function assertDeliveredOnce(s: FaultStack, rx: HookReceiver, videoIds: string[], timeoutMs = 120_000): Promise<{ events: number; retries: number }> {
  const uuids = await uuidsOf(s, videoIds);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events: Array<{ id: string; type: string }> = await s.db('events').whereIn('video_id', uuids).select('id', 'type');
    const ok = events.filter((e) => rx.seen.some((x) => x.id === e.id && x.answered === 204));
    if (events.length > 0 && ok.length === events.length) {
      for (const e of events) {
        const succeeded = rx.seen.filter((x) => x.id === e.id && x.answered === 204);
        if (succeeded.length !== 1) throw new Error(`${e.type} ${e.id} succeeded ${succeeded.length} times`);
      }
      const unverified = rx.seen.filter((x) => !x.verified);
      if (unverified.length) throw new Error(`signatures that standardwebhooks rejected: ${JSON.stringify(unverified)}`);
      const ids = new Set(events.map((e) => e.id));
      const mine = rx.seen.filter((x) => ids.has(x.id));
      return { events: events.length, retries: mine.length - events.length };
    }
    if (Date.now() > deadline) {
      throw new Error(`events not all delivered: ${JSON.stringify(events)} seen ${JSON.stringify(rx.seen)}`);
    }
    await sleep(300);
  }
}

async function uuidsOf(s: FaultStack, videoIds: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const id of videoIds) out.push((await s.call('GET', `/v1/videos/${id}`)).body.uuid);
  return out;
}

/** Resolves when the process prints a line matching `re`. */
export async function printed(p: Proc, re: RegExp, timeoutMs = 120_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const m = re.exec(p.output());
    if (m) return m[0];
    if (p.child.exitCode !== null) throw new Error(`${p.name} exited: ${p.output()}`);
    await sleep(100);
  }
  throw new Error(`${p.name} did not print ${re} in ${timeoutMs} ms: ${p.output()}`);
}
