import { finished } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { detached, type Db } from '../db';
import type { Logger } from '../logger';
import { analyticsEventsDropped } from '../metrics/registry';
import type { BeaconEvent } from './events';

/** A well-formed beacon body as the ingest took it: events, who sent them (never stored) and when. */
export interface BeaconBody {
  events: BeaconEvent[];
  ua: string;
  /** The client address (X-Forwarded-For only through TRUSTED_PROXIES): the viewer hash and the country, never stored. */
  address: string;
  receivedAt: Date;
}

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
  /** The player's displayed height in device pixels (upscale/downscale against the rendition). */
  player_height: number | null;
  /** Live: how far behind the live edge the player is, in ms, as it reports it. */
  latency_ms: number | null;
  /** `viewstart` only: the viewer's country (ISO 3166-1 alpha-2) from the address, which is not stored. */
  country: string | null;
}

const COLUMNS =
  'day date, received_at timestamptz, view_id uuid, seq integer, subject_id text, event text, position real, elapsed_ms integer, watch_ms integer, ' +
  'bitrate integer, rendition text, error_code text, workspace_id text, viewer_hash bigint, browser text, os text, device text, player text, player_height integer, latency_ms integer, country text';
const NAMES = COLUMNS.split(', ').map((c) => c.split(' ')[0]).join(', ');
/**
 * The slow path, one statement whatever the batch size: the rows travel as one JSON parameter and
 * duplicates `(view_id, seq)` are dropped by the unique index. `json`, not `jsonb`: the document
 * is read once, so building jsonb's binary form first only costs time (≈ 25 % of the statement).
 */
const INSERT = `insert into analytics_events (${NAMES}) select ${NAMES} from json_to_recordset(?::json) as r(${COLUMNS}) on conflict do nothing`;
/**
 * The fast path: COPY (text format) into the partitioned table. Postgres spends ≈ 7 µs a row on it
 * against ≈ 25 µs for the JSON INSERT … ON CONFLICT (docs/analytics.md, *Ingest*), but COPY has no
 * ON CONFLICT: a duplicate makes it fail whole (nothing written), and the batch then goes the slow path.
 */
const COPY = `copy analytics_events (${NAMES}) from stdin`;
const FIELDS = NAMES.split(', ') as Array<keyof RawEvent>;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
/** After a duplicate, the slow path for this long: retries come in bursts, and each would fail its COPY. */
const SLOW_AFTER_DUPLICATE_MS = 5_000;

/** What a string needs a second look for (code units, not code points: any surrogate half). */
const SUSPECT = /[\0\\\n\r\t\ud800-\udfff]/;
const ESCAPED = /[\\\n\r\t]/g;
/** A NUL, or an unpaired surrogate (a pair is a code point, which a `u` regex does not split). */
const UNCARRIABLE = /[\0\p{Cs}]/u;

/** One field in COPY's text format; undefined for a string the text format cannot carry as the JSON path would. */
function copyField(v: unknown): string | undefined {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '\\N'; // as JSON.stringify would send it
  const s = String(v);
  if (!SUSPECT.test(s)) return s;
  if (UNCARRIABLE.test(s)) return undefined;
  return s.replace(ESCAPED, (c) => ESCAPES[c]);
}

/**
 * The batch in COPY's text format, or undefined when a string holds what the text format cannot
 * carry as the JSON path would (a NUL, which COPY refuses too, or an unpaired surrogate, which
 * UTF-8 encoding would silently turn into U+FFFD): those batches take the slow path, which
 * quarantines what Postgres refuses.
 */
export function copyText(rows: RawEvent[]): string | undefined {
  let out = '';
  for (const r of rows) {
    for (let i = 0; i < FIELDS.length; i++) {
      const f = copyField(r[FIELDS[i]]);
      if (f === undefined) return undefined;
      out += i ? '\t' + f : f;
    }
    out += '\n';
  }
  return out;
}

/**
 * Did Postgres refuse the statement for what the rows hold (SQLSTATE class 22 data exception, 23
 * integrity violation: a NUL, an unpaired surrogate, a value out of range), rather than because it
 * could not run it now (no code: the connection; 08, 40, 53, 57, 58, XX…)? Only the former is
 * worth splitting the batch for; the latter is retried whole.
 */
export function refusedForContent(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5 && (code.startsWith('22') || code.startsWith('23'));
}

/**
 * Accepted beacons wait here and are written by one COPY per flush (or, for a batch with a
 * duplicate, one multi-row INSERT … ON CONFLICT DO NOTHING): every `flushMs`, or at once when
 * `flushRows` are waiting. Either is one statement: a batch is written whole or not at all, and
 * committed (synchronous_commit as configured) before it leaves the buffer. A write that fails
 * because the database is away keeps its rows for the next flush (up to `maxRows`; past it the oldest are dropped, counted
 * and logged). A write the database refuses for its content is **quarantined**, never retried as
 * it is: the batch is split in halves until the rows that fail are single, those are dropped
 * (counted in `refused`, logged with their view and subject) and every other row is written — one
 * bad record never blocks the queue (issue 33). `close` writes everything before the process
 * exits, so a SIGTERM loses no accepted beacon.
 */
export class BeaconBuffer {
  private rows: RawEvent[] = [];
  /**
   * Bodies accepted before what their rows need was in memory (a subject's access decision, the
   * day's salt): turned into rows by `opts.resolve` at the next flush, so a beacon is answered
   * without waiting on the database (issue 45: a busy pool made beacons wait, fail and be dropped
   * by their players). Bounded with the rows (`maxRows` counts their events).
   */
  private bodies: BeaconBody[] = [];
  private bodyEvents = 0;
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  /** Rows written by this process (for tests and /metrics). */
  written = 0;
  /** Rows the database refused for their content, dropped. */
  refused = 0;
  /** Rows dropped because the buffer was full. */
  overflowed = 0;
  /** Batches written by COPY, and by the INSERT (a duplicate, or content COPY cannot carry). */
  copied = 0;
  inserted = 0;
  private slowUntil = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly opts: { flushMs: number; flushRows: number; maxRows: number; resolve?: (bodies: BeaconBody[]) => Promise<RawEvent[]> },
  ) {
    this.timer = setInterval(() => void this.flush(), opts.flushMs);
    this.timer.unref();
  }

  /** Rows and deferred bodies' events waiting. */
  get pending(): number {
    return this.rows.length + this.bodyEvents;
  }

  /** Takes a body whose rows are made at the next flush (`opts.resolve`), within the same bound as rows. */
  defer(body: BeaconBody): void {
    this.bodies.push(body);
    this.bodyEvents += body.events.length;
    this.bound();
  }

  push(rows: RawEvent[]): void {
    for (const r of rows) this.rows.push(r);
    this.bound();
    if (this.rows.length >= this.opts.flushRows && !this.closed) void this.flush();
  }

  /** Past `maxRows` (rows and deferred events together), the oldest go: deferred bodies first, then rows. */
  private bound(): void {
    let over = this.pending - this.opts.maxRows;
    if (over <= 0) return;
    let dropped = 0;
    while (over > 0 && this.bodies.length) {
      const b = this.bodies.shift()!;
      this.bodyEvents -= b.events.length;
      over -= b.events.length;
      dropped += b.events.length;
    }
    if (over > 0) dropped += this.rows.splice(0, over).length;
    this.overflowed += dropped;
    analyticsEventsDropped.inc({ reason: 'overflow' }, dropped);
    this.log.error({ dropped }, 'analytics buffer full (database unreachable?); oldest events dropped');
  }

  /** Deferred bodies into rows; on failure (the database away) they wait for the next flush (false). */
  private async resolveBodies(): Promise<boolean> {
    if (!this.bodies.length || !this.opts.resolve) return true;
    const bodies = this.bodies;
    this.bodies = [];
    this.bodyEvents = 0;
    try {
      for (const r of await this.opts.resolve(bodies)) this.rows.push(r);
      return true;
    } catch (err) {
      this.bodies = [...bodies, ...this.bodies];
      this.bodyEvents = this.bodies.reduce((n, b) => n + b.events.length, 0);
      this.log.warn({ err, bodies: bodies.length }, 'analytics: beacons not resolved yet (database away?); will retry');
      return false;
    }
  }

  flush(): Promise<void> {
    // Never part of the request that happened to fill the buffer: its client going away must not
    // cancel the batch's statement (api/middleware/cancel.ts).
    this.flushing ??= detached(() => this.write()).finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async insert(rows: RawEvent[]): Promise<void> {
    await this.db.raw(INSERT, [JSON.stringify(rows)]);
    this.written += rows.length;
    this.inserted++;
  }

  private async copy(text: string): Promise<void> {
    const client = this.db.client as { acquireConnection(): Promise<{ query<T>(q: T): T }>; releaseConnection(c: unknown): Promise<void> };
    const conn = await client.acquireConnection();
    try {
      const stream = conn.query(copyFrom(COPY));
      stream.end(Buffer.from(text, 'utf8'));
      await finished(stream); // after the server's CommandComplete: the COPY is committed
    } finally {
      await client.releaseConnection(conn);
    }
  }

  /** COPY, or the INSERT when COPY cannot take the batch; throws what the database answered. */
  private async store(rows: RawEvent[]): Promise<void> {
    const text = Date.now() >= this.slowUntil ? copyText(rows) : undefined;
    if (text !== undefined) {
      try {
        await this.copy(text);
        this.written += rows.length;
        this.copied++;
        return;
      } catch (err) {
        // The database away: keep the batch (the caller retries it whole). A duplicate (a retried
        // beacon) or a value Postgres refuses: COPY wrote nothing; the INSERT drops duplicates and
        // its failure, if any, is what the quarantine splits.
        if (!refusedForContent(err)) throw err;
        if ((err as { code?: string }).code === '23505') this.slowUntil = Date.now() + SLOW_AFTER_DUPLICATE_MS;
      }
    }
    await this.insert(rows);
  }

  private async write(): Promise<void> {
    // Bodies deferred while this write runs are written by it too (a flush awaited after a push
    // or a defer sees them stored).
    let resolving = true;
    while (this.rows.length > 0 || (resolving && this.bodies.length > 0 && this.opts.resolve)) {
      if (this.bodies.length) resolving = await this.resolveBodies();
      if (this.rows.length === 0) continue;
      const batch = this.rows.splice(0, Math.max(this.opts.flushRows, 1));
      let left: RawEvent[] = [];
      try {
        await this.store(batch);
      } catch (err) {
        left = refusedForContent(err) ? await this.quarantine(batch) : batch;
        if (left.length) {
          this.rows.unshift(...left);
          this.log.warn({ err, pending: this.rows.length }, 'analytics flush failed; will retry');
          return;
        }
      }
    }
  }

  /**
   * Writes a batch the database refused for its content in halves, down to single rows; drops the
   * rows that fail alone. Returns what is left unwritten if the database went away meanwhile.
   */
  private async quarantine(batch: RawEvent[]): Promise<RawEvent[]> {
    const chunks = [batch.slice(0, batch.length >> 1), batch.slice(batch.length >> 1)].filter((c) => c.length);
    while (chunks.length) {
      const chunk = chunks.shift()!;
      try {
        await this.insert(chunk);
      } catch (err) {
        if (!refusedForContent(err)) return [...chunk, ...chunks.flat()];
        if (chunk.length > 1) {
          chunks.unshift(chunk.slice(0, chunk.length >> 1), chunk.slice(chunk.length >> 1));
          continue;
        }
        const r = chunk[0];
        this.refused++;
        analyticsEventsDropped.inc({ reason: 'refused' });
        this.log.error({ err, view_id: r.view_id, seq: r.seq, subject_id: r.subject_id, event: r.event }, 'analytics event refused by the database for its content; dropped');
      }
    }
    return [];
  }
  /** Stops the timer and writes what is pending (retrying a few times). */
  async close(attempts = 5): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    for (let i = 0; i < attempts; i++) {
      await this.flushing;
      if (this.pending === 0) return;
      await this.flush();
      if (this.pending > 0) await new Promise((r) => setTimeout(r, 200 * (i + 1)));
    }
    if (this.pending > 0) this.log.error({ pending: this.pending }, 'analytics events could not be written at shutdown');
  }
}
