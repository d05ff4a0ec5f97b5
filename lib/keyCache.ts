import type { Db } from './db';
import { hashKey, type Access } from './keys';
import type { Logger } from './logger';
import { listen, type Listener } from './pg/listen';

/** The channel the api_keys and workspaces triggers notify on (migration 20261123050000). */
export const KEYS_CHANNEL = 'vidhost_keys';

export interface KeyIdentity {
  keyId: string;
  workspaceId: string;
  access: Access;
  plan: string;
  /** The person who made the key (null: made with the admin CLI); their removal revokes it. */
  personId: string | null;
}

interface Entry {
  identity: KeyIdentity;
  hash: string;
  expiresAt: number;
}

/**
 * API key lookups served from memory. Every change that can refuse or narrow a key (revoke,
 * delete, access or plan change) is pushed by a Postgres trigger through NOTIFY to every process,
 * which drops the entry at once; a revoked key is refused as soon as the notification lands
 * (milliseconds). While the LISTEN connection is down nothing is cached, so a missed
 * notification can never keep a key alive; `ttlMs` is only a backstop.
 * Unknown keys are not cached (a new key works at once); guessing is limited per client address.
 */
export class KeyCache {
  private entries = new Map<string, Entry>();
  /** Bumped by every notification: a lookup that raced one does not store its answer. */
  private epoch = 0;
  private readonly listener: Listener;

  constructor(
    private readonly db: Db,
    databaseUrl: string,
    log: Logger,
    private readonly ttlMs = 60_000,
  ) {
    this.listener = listen(databaseUrl, KEYS_CHANNEL, { onNotify: (p) => this.invalidate(p), onReset: () => this.clear() }, log);
  }

  /** The cached identity, without touching the database; null on a miss. */
  peek(secret: string): KeyIdentity | null {
    const hit = this.entries.get(hashKey(secret));
    if (!hit || hit.expiresAt <= Date.now()) return null;
    return hit.identity;
  }

  /** The key's identity from the database (cached when safe to), or null if unknown or revoked. */
  async lookup(secret: string): Promise<KeyIdentity | null> {
    const hash = hashKey(secret);
    const epoch = this.epoch;
    const row = await this.db('api_keys as k')
      .join('workspaces as w', 'w.id', 'k.workspace_id')
      .where({ 'k.key_hash': hash })
      .whereNull('k.revoked_at')
      .first('k.id', 'k.workspace_id', 'k.access', 'w.plan', 'k.created_by');
    if (!row) {
      this.entries.delete(hash);
      return null;
    }
    const identity: KeyIdentity = { keyId: row.id, workspaceId: row.workspace_id, access: row.access, plan: row.plan, personId: row.created_by ?? null };
    if (this.listener.connected && epoch === this.epoch) this.entries.set(hash, { identity, hash, expiresAt: Date.now() + this.ttlMs });
    return identity;
  }

  /** This process changed the key: forget it now rather than when the notification lands. */
  forget(hash: string): void {
    this.invalidate(`key:${hash}`);
  }

  /** Payload: `key:<sha256>` or `ws:<workspace id>` (a plan change or a deleted workspace). */
  private invalidate(payload: string): void {
    this.epoch++;
    const [kind, value] = [payload.slice(0, payload.indexOf(':')), payload.slice(payload.indexOf(':') + 1)];
    if (kind === 'key') {
      this.entries.delete(value);
    } else if (kind === 'ws') {
      for (const [h, e] of this.entries) if (e.identity.workspaceId === value) this.entries.delete(h);
    } else {
      this.clear();
    }
  }

  private clear(): void {
    this.epoch++;
    this.entries.clear();
  }

  async close(): Promise<void> {
    await this.listener.close();
  }
}
