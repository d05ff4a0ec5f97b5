import type { Logger } from '../logger';
import { listen, type Listener } from '../pg/listen';
import type { Storage } from '../storage';
import { PLAYBACK_CHANNEL } from './accessCache';

export interface CachedFile {
  body: Buffer;
  etag: string | undefined;
}

interface Entry {
  /** null: too big to keep (or missing); the route streams it. */
  file: Promise<CachedFile | null>;
  expiresAt: number;
  video: string;
  bytes: number;
  /** The file once read (and kept): what `peek` returns. */
  settled?: CachedFile;
}

/**
 * The CDN's small files (playlists, segments, thumbnails) in memory, so a hot file is one write
 * to the socket instead of a stat, an open, reads and a close on the local driver, or a GET to
 * the S3 server. Node has no sendfile; this is the equivalent an origin uses (nginx's
 * proxy_cache, Varnish). Entries live as long as the access decisions they are served under
 * (CDN_ACCESS_CACHE_MS), and go at once when the playback triggers say the video changed (a
 * rendition published rewrites the master playlist; a deletion, a retry). Files over a
 * sixteenth of the budget (CDN_FILE_CACHE_MB) are streamed as before; nothing is cached while
 * LISTEN is down. Concurrent misses share one read.
 */
export class FileCache {
  private entries = new Map<string, Entry>();
  private bytes = 0;
  private readonly listener: Listener | undefined;
  private readonly maxFile: number;

  constructor(
    private readonly storage: Storage,
    private readonly maxBytes: number,
    private readonly ttlMs: number,
    databaseUrl: string,
    log: Logger,
  ) {
    this.maxFile = Math.floor(maxBytes / 16);
    if (maxBytes > 0 && ttlMs > 0) this.listener = listen(databaseUrl, PLAYBACK_CHANNEL, { onNotify: (p) => this.onNotify(p), onReset: () => this.clear() }, log);
  }

  /** The file at `key` of video `video`, from memory, or null when it is not cached (stream it). */
  async get(video: string, key: string): Promise<CachedFile | null> {
    if (!this.listener?.connected) return null;
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now) return hit.file;
    if (hit) this.remove(key);
    const entry: Entry = { file: Promise.resolve(null), expiresAt: now + this.ttlMs, video, bytes: 0 };
    // Settles to null rather than rejecting, for this caller and any that share the read: a
    // storage error is not remembered, and the route's own read reports it.
    entry.file = this.load(key).then(
      (file) => {
        if (file && this.entries.get(key) === entry) {
          this.account(key, entry, file.body.length);
          entry.settled = file;
        }
        return file;
      },
      () => {
        if (this.entries.get(key) === entry) this.remove(key);
        return null;
      },
    );
    this.entries.set(key, entry);
    return entry.file;
  }

  /** The file at `key` if it is in memory and current, without waiting (the CDN's fast path). */
  peek(key: string): CachedFile | undefined {
    if (!this.listener?.connected) return undefined;
    const hit = this.entries.get(key);
    return hit && hit.expiresAt > Date.now() ? hit.settled : undefined;
  }

  private async load(key: string): Promise<CachedFile | null> {
    // One read: the size comes with the object; a file too big to keep is closed unread.
    const object = await this.storage.get(key);
    if (!object) return null;
    if (object.size > this.maxFile) {
      object.body.destroy();
      return null;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of object.body) chunks.push(chunk as Buffer);
    return { body: Buffer.concat(chunks), etag: object.etag };
  }

  private account(key: string, e: Entry, bytes: number): void {
    e.bytes = bytes;
    this.bytes += bytes;
    while (this.bytes > this.maxBytes && this.entries.size > 1) {
      const oldest = this.entries.keys().next().value!;
      if (oldest === key) break;
      this.remove(oldest);
    }
  }

  /**
   * `video:<uuid>`: that video's files may have changed. (`ws:` notifications are about plans and
   * bandwidth: they change access decisions, which are checked before a file is served, not files.)
   */
  private onNotify(payload: string): void {
    if (payload.startsWith('video:')) this.dropVideo(payload.slice('video:'.length));
  }

  /** Forget a video's files (this process rewrote one: it need not wait for its notification). */
  dropVideo(video: string): void {
    for (const [k, e] of this.entries) if (e.video === video) this.remove(k);
  }

  private remove(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }

  private clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  async close(): Promise<void> {
    await this.listener?.close();
  }
}
