import type { Db } from '../db';
import type { Logger } from '../logger';
import { limitsOf } from '../plans';

/** The plan's monthly allowance when `used` bytes have reached it, else undefined (SPEC §10: only Free is capped). */
export function exceededAllowance(plan: string, used: number): number | undefined {
  const allowance = limitsOf(plan).monthlyBandwidthBytes;
  return allowance !== null && used >= allowance ? allowance : undefined;
}

/** The first day of the month (UTC) that `bandwidth_usage.month` keys by. */
export function monthOf(d: Date = new Date()): string {
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-01`;
}

/**
 * Counts bytes served per workspace and month. The hot path only adds to a map; a timer
 * flushes it in one upsert, so a busy workspace costs one write every few seconds instead of
 * one per segment (and never contends on its row). A crash loses at most one interval.
 */
export class BandwidthMeter {
  private pendingBytes = new Map<string, { workspaceId: string; month: string; bytes: number }>();
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    flushEveryMs = 2000,
  ) {
    this.timer = setInterval(() => void this.flush(), flushEveryMs);
    this.timer.unref();
  }

  record(workspaceId: string, month: string, bytes: number): void {
    if (bytes <= 0) return;
    const k = `${workspaceId}|${month}`;
    const entry = this.pendingBytes.get(k);
    if (entry) entry.bytes += bytes;
    else this.pendingBytes.set(k, { workspaceId, month, bytes });
  }

  /** Bytes served by this process and not yet in the table. */
  pending(workspaceId: string, month: string): number {
    return this.pendingBytes.get(`${workspaceId}|${month}`)?.bytes ?? 0;
  }

  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async write(): Promise<void> {
    if (this.pendingBytes.size === 0) return;
    const batch = [...this.pendingBytes.values()];
    this.pendingBytes = new Map();
    try {
      // The join drops workspaces deleted meanwhile instead of failing the whole batch on the FK.
      await this.db.raw(
        `insert into bandwidth_usage (workspace_id, month, bytes)
         select v.workspace_id, v.month, v.bytes
           from (values ${batch.map(() => '(?::text, ?::date, ?::bigint)').join(', ')}) as v(workspace_id, month, bytes)
           join workspaces w on w.id = v.workspace_id
         on conflict (workspace_id, month) do update set bytes = bandwidth_usage.bytes + excluded.bytes`,
        batch.flatMap((b) => [b.workspaceId, b.month, b.bytes]),
      );
    } catch (err) {
      for (const b of batch) this.record(b.workspaceId, b.month, b.bytes);
      this.log.warn({ err }, 'bandwidth usage flush failed; will retry');
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * On shutdown: stop the timer and write everything still pending, including bytes recorded
   * while an earlier flush was in flight (each flush takes a snapshot), retrying a failed write.
   */
  async close(attempts = 5): Promise<void> {
    this.stop();
    for (let i = 0; i < attempts; i++) {
      await this.flushing;
      if (this.pendingBytes.size === 0) return;
      await this.flush();
    }
    if (this.pendingBytes.size > 0) this.log.error({ pending: [...this.pendingBytes.values()] }, 'bandwidth usage could not be written at shutdown');
  }
}
