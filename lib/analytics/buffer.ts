import type { Db } from '../db';
import type { Logger } from '../logger';

/** One row of analytics_events as the ingest builds it. */
export interface RawEvent {
  day: string;
  received_at: string;
  view_id: string;
  seq: number;
  subject_id: string;
  event: string;
  position: number;
  elapsed_ms: number | null;
  watch_ms: number | null;
  bitrate: number | null;
  rendition: string | null;
  error_code: string | null;
  workspace_id: string | null;
  viewer_hash: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
  player: string | null;
}

const COLUMNS =
  'day date, received_at timestamptz, view_id uuid, seq integer, subject_id text, event text, position real, elapsed_ms integer, watch_ms integer, ' +
  'bitrate integer, rendition text, error_code text, workspace_id text, viewer_hash bigint, browser text, os text, device text, player text';
const NAMES = COLUMNS.split(', ').map((c) => c.split(' ')[0]).join(', ');
/** One statement whatever the batch size: the rows travel as one JSON parameter. Duplicates `(view_id, seq)` are dropped by the unique index. */
const INSERT = `insert into analytics_events (${NAMES}) select ${NAMES} from jsonb_to_recordset(?::jsonb) as r(${COLUMNS}) on conflict do nothing`;

/**
 * Accepted beacons wait here and are written by one multi-row INSERT per flush: every
 * `flushMs`, or at once when `flushRows` are waiting. A failed write keeps its rows for the
 * next flush (up to `maxRows`; past it the oldest are dropped and logged). `close` writes
 * everything before the process exits, so a SIGTERM loses no accepted beacon.
 */
export class BeaconBuffer {
  private rows: RawEvent[] = [];
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  /** Rows written by this process (for tests and /metrics). */
  written = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly opts: { flushMs: number; flushRows: number; maxRows: number },
  ) {
    this.timer = setInterval(() => void this.flush(), opts.flushMs);
    this.timer.unref();
  }

  get pending(): number {
    return this.rows.length;
  }

  push(rows: RawEvent[]): void {
    for (const r of rows) this.rows.push(r);
    if (this.rows.length > this.opts.maxRows) {
      const dropped = this.rows.splice(0, this.rows.length - this.opts.maxRows);
      this.log.error({ dropped: dropped.length }, 'analytics buffer full (database unreachable?); oldest events dropped');
    }
    if (this.rows.length >= this.opts.flushRows && !this.closed) void this.flush();
  }

  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async write(): Promise<void> {
    while (this.rows.length > 0) {
      const batch = this.rows.splice(0, Math.max(this.opts.flushRows, 1));
      try {
        await this.db.raw(INSERT, [JSON.stringify(batch)]);
        this.written += batch.length;
      } catch (err) {
        this.rows.unshift(...batch);
        this.log.warn({ err, pending: this.rows.length }, 'analytics flush failed; will retry');
        return;
      }
    }
  }

  /** Stops the timer and writes what is pending (retrying a few times). */
  async close(attempts = 5): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (let i = 0; i < attempts; i++) {
      await this.flushing;
      if (this.rows.length === 0) return;
      await this.flush();
      if (this.rows.length > 0) await new Promise((r) => setTimeout(r, 200 * (i + 1)));
    }
    if (this.rows.length > 0) this.log.error({ pending: this.rows.length }, 'analytics events could not be written at shutdown');
  }
}
