import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db';

/** `YYYY-MM-DD` (UTC) of a time. */
export const dayOf = (t: Date | number = Date.now()): string => new Date(t).toISOString().slice(0, 10);

/**
 * The day's random salt, made by whichever process asks first and shared through Postgres (so
 * every API process hashes alike). The rollup deletes past days' salts: once gone, nobody —
 * not the operator — can link a hash back to an address, nor yesterday's viewer to today's.
 */
export class DailySalt {
  private current?: { day: string; salt: Buffer };
  private pending?: Promise<Buffer>;
  constructor(private readonly db: Db) {}

  /** The salt of `now`'s day if this process already holds it (no query). */
  peek(now = Date.now()): Buffer | undefined {
    return this.current?.day === dayOf(now) ? this.current.salt : undefined;
  }

  async get(now = Date.now()): Promise<Buffer> {
    const day = dayOf(now);
    if (this.current?.day === day) return this.current.salt;
    this.pending ??= (async () => {
      try {
        await this.db.raw(`insert into analytics_salts (day, salt) values (?, ?) on conflict (day) do nothing`, [day, randomBytes(32)]);
        const { rows } = await this.db.raw(`select salt from analytics_salts where day = ?`, [day]);
        this.current = { day, salt: rows[0].salt as Buffer };
        return this.current.salt;
      } finally {
        this.pending = undefined;
      }
    })();
    return this.pending;
  }
}

/**
 * The unique-viewer hash: SHA-256 over (salt, address, user agent, workspace), first 8 bytes as a
 * signed bigint (string, for pg). Neither the address nor the agent string is stored.
 */
export function viewerHash(salt: Buffer, address: string, userAgent: string, workspaceId: string): string {
  const h = createHash('sha256').update(salt).update('\0').update(address).update('\0').update(userAgent).update('\0').update(workspaceId).digest();
  return h.readBigInt64BE(0).toString();
}
