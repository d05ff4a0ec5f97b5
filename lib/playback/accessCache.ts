import { decodeJwt } from 'jose';
import type { Config } from '../config';
import type { Db } from '../db';
import { parseVideoId } from '../ids';
import type { Logger } from '../logger';
import { listen, type Listener } from '../pg/listen';
import { type PlaybackAccess, resolvePlayback } from './access';

/** The channel the videos/renditions/bandwidth triggers notify on (migration 20261123050200). */
export const PLAYBACK_CHANNEL = 'vidhost_playback';

interface Entry {
  access: Promise<PlaybackAccess>;
  expiresAt: number;
  /** The video the subject names (also for a not_found answer, so an undelete reaches it). */
  uuid: string | null;
  workspaceId?: string;
  /** The answer once it is in and still current (only `ok` answers): what `peek` returns. */
  settled?: PlaybackAccess;
  /** While the lookup runs: a notification named its video (drop the answer), or these workspaces. */
  stale?: boolean;
  notifiedWorkspaces?: string[];
}

const entryKey = (ref: { id?: string; token?: string }) => `${ref.id ?? ''}|${ref.token ?? ''}`;

/** The video a subject names: the id, or a token's `sub` (read unverified; only to index the entry). */
function subjectUuid(ref: { id?: string; token?: string }): string | null {
  if (ref.id !== undefined) return parseVideoId(ref.id);
  try {
    return ref.token ? (decodeJwt(ref.token).sub ?? null) : null;
  } catch {
    return null;
  }
}

const MAX_ENTRIES = 20_000;

/**
 * Playback decisions (token check + the video's row) per subject: a player fetching a playlist
 * and its segments costs one lookup, not one per file. Changes that matter (visibility, status,
 * deletion, a rendition finishing, plan or bandwidth use) are pushed by Postgres triggers over
 * NOTIFY and drop the entries at once in every process; `ttlMs` (CDN_ACCESS_CACHE_MS, default
 * 2 s) bounds staleness if a notification is lost, and nothing is cached while LISTEN is down.
 * A cached grant never outlives its token. Concurrent misses share one lookup; the map is
 * bounded (oldest entries go first).
 */
export class AccessCache {
  private entries = new Map<string, Entry>();
  /** Lookups not yet settled, which notifications arriving meanwhile may make stale. */
  private readonly resolving = new Set<Entry>();
  /** Bumped when LISTEN was reset: whatever was in flight may have missed a notification. */
  private epoch = 0;
  private readonly listener: Listener | undefined;

  constructor(
    private readonly db: Db,
    private readonly playback: Config['playback'],
    private readonly ttlMs: number,
    databaseUrl: string,
    log: Logger,
  ) {
    if (ttlMs > 0) this.listener = listen(databaseUrl, PLAYBACK_CHANNEL, { onNotify: (p) => this.invalidate(p), onReset: () => this.clear() }, log);
  }

  resolve(ref: { id?: string; token?: string }): Promise<PlaybackAccess> {
    if (!this.listener?.connected) return resolvePlayback(this.db, this.playback, ref);
    const key = entryKey(ref);
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > now) return hit.access;
    if (hit) this.entries.delete(key);
    const epoch = this.epoch;
    const entry: Entry = { access: resolvePlayback(this.db, this.playback, ref), expiresAt: now + this.ttlMs, uuid: subjectUuid(ref) };
    this.entries.set(key, entry);
    this.resolving.add(entry);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    const drop = () => this.entries.get(key) === entry && this.entries.delete(key);
    entry.access.then((a) => {
      this.resolving.delete(entry);
      // A change notified while the lookup ran may not be in its answer: one naming this video,
      // or (known only now) its workspace, or a reset. Changes to other videos do not matter.
      if (epoch !== this.epoch || entry.stale) return drop();
      // (A refusal does not say its workspace: any workspace notified drops it, as before.)
      if (entry.notifiedWorkspaces && (a.kind !== 'ok' || entry.notifiedWorkspaces.includes(a.video.workspace_id))) return drop();
      if (a.kind !== 'ok') return;
      entry.workspaceId = a.video.workspace_id;
      if (a.grant) entry.expiresAt = Math.min(entry.expiresAt, a.grant.expiresAt.getTime());
      entry.settled = a;
    }, () => {
      this.resolving.delete(entry);
      drop();
    });
    return entry.access;
  }

  /** The cached `ok` decision for `ref`, if one is in and current, without waiting (the CDN's fast path). */
  peek(ref: { id?: string; token?: string }): PlaybackAccess | undefined {
    if (!this.listener?.connected) return undefined;
    const hit = this.entries.get(entryKey(ref));
    return hit && hit.expiresAt > Date.now() ? hit.settled : undefined;
  }

  /** `video:<uuid>` or `ws:<workspace id>`. */
  private invalidate(payload: string): void {
    const i = payload.indexOf(':');
    const [kind, value] = [payload.slice(0, i), payload.slice(i + 1)];
    for (const [k, e] of this.entries) if ((kind === 'video' && e.uuid === value) || (kind === 'ws' && e.workspaceId === value)) this.entries.delete(k);
    // Lookups still running are judged when they settle (their workspace is not known before):
    // only a change to their own video or workspace drops their answer. (A global epoch dropped
    // every answer in flight whenever any video anywhere changed, e.g. each bandwidth flush.)
    for (const e of this.resolving) {
      if (kind === 'video') e.stale ||= e.uuid === value;
      else if (kind !== 'ws' || (e.notifiedWorkspaces?.length ?? 0) >= 64) e.stale = true; // a slow lookup under a flood: just drop it
      else (e.notifiedWorkspaces ??= []).push(value);
    }
  }

  private clear(): void {
    this.epoch++;
    this.entries.clear();
  }

  async close(): Promise<void> {
    await this.listener?.close();
  }
}
