import type { Logger } from '../logger';
import { listen, type Listener } from '../pg/listen';

/** The channel the read triggers notify on (migration 20261124030000_read_cache_notify). */
export const READS_CHANNEL = 'vidhost_reads';

interface Entry {
  /** The answer's bytes: a hit is written as it is, with no UTF-8 encoding per request. */
  body: Promise<Buffer | undefined>;
  /** The same bytes once they are stored (loaded, cacheable, no change raced the load): what `peek` answers. */
  stored?: Buffer;
  expiresAt: number;
  ws: string;
  /** The video this entry shows, or null for a list page (any change in the workspace drops it). */
  video: string | null;
  bytes: number;
}

/** Bodies kept per process at most (a page of 100 videos is ~150 KB); the oldest go first. */
const MAX_BYTES = 64 * 1024 * 1024;

/**
 * Serialized answers of `GET /videos/{id}` and `GET /videos` per workspace, so a hot read is a
 * map lookup instead of a query. Correctness comes from the triggers, not the TTL: every change
 * to a video, its renditions, tags, captions or static files notifies every process, which drops
 * that video's entry and the workspace's list pages at once; `ttlMs` (READ_CACHE_MS) only bounds
 * a lost notification, and nothing is cached while LISTEN is down. A request that changes the
 * workspace through this process drops its entries before it answers (`dropWorkspace`), so a
 * client reads its own writes without waiting for the notification. A lookup that raced a change
 * is not stored (an epoch a workspace); concurrent misses share one lookup.
 */
export class ReadCache {
  private entries = new Map<string, Entry>();
  private byWs = new Map<string, Set<string>>();
  private epochs = new Map<string, number>();
  private epoch = 0;
  private bytes = 0;
  private readonly listener: Listener | undefined;

  constructor(databaseUrl: string, log: Logger, private readonly ttlMs: number) {
    if (ttlMs > 0) this.listener = listen(databaseUrl, READS_CHANNEL, { onNotify: (p) => this.onNotify(p), onReset: () => this.clear() }, log);
  }

  /**
   * The cached body for (`ws`, `key`), or `load`'s. `load` says `cache: false` for what must not be
   * kept (a video still processing, whose state comes from its workflow).
   */
  async get(ws: string, video: string | null, key: string, load: () => Promise<{ body: Buffer; cache: boolean }>): Promise<Buffer> {
    if (!this.listener?.connected) return (await load()).body;
    const k = `${ws}|${key}`;
    const now = Date.now();
    const hit = this.entries.get(k);
    if (hit && hit.expiresAt > now) {
      const body = await hit.body;
      if (body !== undefined) return body;
    } else if (hit) {
      this.remove(k);
    }
    const epoch = this.epochOf(ws);
    const loading = load();
    const entry: Entry = { body: loading.then((r) => (r.cache ? r.body : undefined)), expiresAt: now + this.ttlMs, ws, video, bytes: 0 };
    // Its failure (a 404, say) reaches this caller below; a waiter that shares it gets it too.
    entry.body.catch(() => undefined);
    this.add(k, entry);
    try {
      const r = await loading;
      // Only an entry still in the map is counted (eviction or expiry may have taken it meanwhile).
      if (this.entries.get(k) === entry) {
        if (r.cache && this.epochOf(ws) === epoch) {
          entry.stored = r.body;
          this.account(k, entry, r.body.length);
        } else this.remove(k);
      }
      return r.body;
    } catch (err) {
      if (this.entries.get(k) === entry) this.remove(k);
      throw err;
    }
  }

  /**
   * The stored body for (`ws`, `key`) without waiting or loading: undefined on a miss, an expired
   * entry, a lookup still in flight, or while LISTEN is down. `get` with the same arguments would
   * answer these bytes now (api/videos/fast.ts answers from it before Koa).
   */
  peek(ws: string, key: string): Buffer | undefined {
    if (!this.listener?.connected) return undefined;
    const hit = this.entries.get(`${ws}|${key}`);
    return hit && hit.expiresAt > Date.now() ? hit.stored : undefined;
  }

  /** Forget everything of `ws` (this process changed it); lookups in flight are not stored. */
  dropWorkspace(ws: string): void {
    this.bump(ws);
    for (const k of this.byWs.get(ws) ?? []) this.remove(k);
  }

  /** `<workspace>:<video uuid>` or `<workspace>:*`. */
  private onNotify(payload: string): void {
    const i = payload.lastIndexOf(':');
    const [ws, video] = [payload.slice(0, i), payload.slice(i + 1)];
    if (video === '*') return this.dropWorkspace(ws);
    this.bump(ws);
    for (const k of this.byWs.get(ws) ?? []) {
      const e = this.entries.get(k);
      if (e && (e.video === null || e.video === video)) this.remove(k);
    }
  }

  private epochOf(ws: string): string {
    return `${this.epoch}.${this.epochs.get(ws) ?? 0}`;
  }

  private bump(ws: string): void {
    // One counter a workspace ever changed; past 100,000 they start again under a new global epoch.
    if (this.epochs.size > 100_000) {
      this.epochs.clear();
      this.epoch++;
    }
    this.epochs.set(ws, (this.epochs.get(ws) ?? 0) + 1);
  }

  private add(k: string, e: Entry): void {
    this.entries.set(k, e);
    let keys = this.byWs.get(e.ws);
    if (!keys) this.byWs.set(e.ws, (keys = new Set()));
    keys.add(k);
  }

  private account(k: string, e: Entry, bytes: number): void {
    e.bytes = bytes;
    this.bytes += bytes;
    while (this.bytes > MAX_BYTES && this.entries.size > 1) {
      const oldest = this.entries.keys().next().value!;
      if (oldest === k) break;
      this.remove(oldest);
    }
  }

  private remove(k: string): void {
    const e = this.entries.get(k);
    if (!e) return;
    this.entries.delete(k);
    this.bytes -= e.bytes;
    const keys = this.byWs.get(e.ws);
    keys?.delete(k);
    if (keys?.size === 0) this.byWs.delete(e.ws);
  }

  private clear(): void {
    this.epoch++;
    this.entries.clear();
    this.byWs.clear();
    this.bytes = 0;
  }

  async close(): Promise<void> {
    await this.listener?.close();
  }
}
