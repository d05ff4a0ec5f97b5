import pg from 'pg';
import type { Logger } from '../logger';

export interface Listener {
  /** True while LISTEN is in force: only then may a cache trust that it hears every change. */
  readonly connected: boolean;
  close(): Promise<void>;
}

interface Subscriber {
  channel: string;
  handlers: { onNotify: (payload: string) => void; onReset: () => void };
  connected: boolean;
}

/**
 * One dedicated connection per database and process carries every LISTEN (pooled connections
 * cannot: the pool hands them around). Sharing it keeps a process at one connection however many
 * caches listen, and a test run with many in-process stacks within Postgres' connection limit.
 */
class SharedConnection {
  private client: pg.Client | undefined;
  private ready = false;
  private readonly listening = new Set<string>();
  private retryMs = 100;
  private timer: NodeJS.Timeout | undefined;
  /** LISTENs go one at a time: a pg client must not be handed a query while one is running. */
  private queue: Promise<void> = Promise.resolve();
  readonly subs = new Set<Subscriber>();

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
    private readonly onEmpty: () => void,
  ) {
    void this.connect();
  }

  add(sub: Subscriber): void {
    this.subs.add(sub);
    if (this.ready) void this.subscribe(sub);
  }

  async remove(sub: Subscriber): Promise<void> {
    this.subs.delete(sub);
    sub.connected = false;
    if (this.subs.size > 0) return;
    this.onEmpty();
    if (this.timer) clearTimeout(this.timer);
    const c = this.client;
    this.client = undefined;
    this.ready = false;
    c?.removeAllListeners();
    await c?.end().catch(() => undefined);
  }

  /** LISTEN on the subscriber's channel if this connection does not yet, then trust it. */
  private subscribe(sub: Subscriber): Promise<void> {
    const c = this.client;
    this.queue = this.queue.then(() => this.listenOn(c, sub));
    return this.queue;
  }

  private async listenOn(c: pg.Client | undefined, sub: Subscriber): Promise<void> {
    if (c !== this.client || !this.subs.has(sub)) return;
    try {
      if (!this.listening.has(sub.channel)) {
        await c!.query(`LISTEN ${pg.escapeIdentifier(sub.channel)}`);
        this.listening.add(sub.channel);
      }
      if (c !== this.client || !this.subs.has(sub)) return;
      // Anything cached before this moment may have missed a notification.
      sub.handlers.onReset();
      sub.connected = true;
    } catch (err) {
      if (c === this.client) this.lost(err as Error);
    }
  }

  private lost(err?: Error): void {
    const c = this.client;
    c?.removeAllListeners();
    c?.end().catch(() => undefined);
    this.client = undefined;
    this.ready = false;
    this.listening.clear();
    for (const sub of this.subs) {
      if (sub.connected || err) sub.handlers.onReset();
      sub.connected = false;
    }
    if (this.subs.size === 0) return;
    if (err) this.log.warn({ err }, 'LISTEN connection lost; reconnecting');
    this.timer = setTimeout(() => void this.connect(), this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, 5000);
  }

  private async connect(): Promise<void> {
    const c = new pg.Client({ connectionString: this.databaseUrl, application_name: 'vidhost-listen' });
    this.client = c;
    c.on('error', (err) => this.lost(err));
    c.on('end', () => this.client === c && this.lost(new Error('connection ended')));
    c.on('notification', (n) => {
      for (const sub of this.subs) if (sub.channel === n.channel) sub.handlers.onNotify(n.payload ?? '');
    });
    try {
      await c.connect();
      if (this.client !== c) return void c.end().catch(() => undefined);
      this.ready = true;
      this.retryMs = 100;
      await Promise.all([...this.subs].map((sub) => this.subscribe(sub)));
    } catch (err) {
      if (this.client === c) this.lost(err as Error);
    }
  }
}

const shared = new Map<string, SharedConnection>();

/**
 * LISTENs on `channel`. On loss of the connection it calls `onReset` (the caller must forget
 * what it cached, since it may have missed notifications) and reconnects with backoff.
 */
export function listen(
  databaseUrl: string,
  channel: string,
  handlers: { onNotify: (payload: string) => void; onReset: () => void },
  log: Logger,
): Listener {
  let conn = shared.get(databaseUrl);
  if (!conn) {
    const created = new SharedConnection(databaseUrl, log, () => {
      if (shared.get(databaseUrl) === created) shared.delete(databaseUrl);
    });
    conn = created;
    shared.set(databaseUrl, conn);
  }
  const sub: Subscriber = { channel, handlers, connected: false };
  conn.add(sub);
  const owner = conn;
  return {
    get connected() {
      return sub.connected;
    },
    close: () => owner.remove(sub),
  };
}
