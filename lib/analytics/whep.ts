import { createHash } from 'node:crypto';
import type { Config } from '../config';
import type { Db } from '../db';
import { edgeStreamStats } from '../live/edge';
import type { Logger } from '../logger';
import { classifyAgent } from './agent';
import type { BeaconBuffer, RawEvent } from './buffer';
import { countryOf } from './country';
import { dayOf, type DailySalt, viewerHash } from './viewer';

/** How often the API writes a heartbeat for each WHEP view it holds (the players' beat, lib/analytics/live.ts). */
export const WHEP_HEARTBEAT_MS = 10_000;
/** The `viewend` of a WHEP view takes the last sequence number, so any API process can write it without knowing the view's count. */
export const WHEP_END_SEQ = 2 ** 31 - 1;

/**
 * The view of one WHEP session: a UUID made from the live stream and the edge's session id, so the
 * process that answers the DELETE (maybe not the one that answered the POST) names the same view.
 */
export function whepViewId(liveStreamId: string, session: string): string {
  const h = createHash('sha256').update('whep\0').update(liveStreamId).update('\0').update(session).digest('hex');
  // RFC 9562 layout (version 8, variant 10): a valid uuid for the column.
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

interface Held {
  viewId: string;
  liveStreamId: string;
  session: string;
  seq: number;
  startedAt: number;
}

/** The viewer of a WHEP POST as the beacons see theirs: never stored, only hashed and reduced. */
export interface WhepViewer {
  address: string;
  userAgent: string;
}

function row(e: Partial<RawEvent> & Pick<RawEvent, 'view_id' | 'seq' | 'subject_id' | 'event'>, now: Date): RawEvent {
  return {
    day: dayOf(now),
    received_at: now.toISOString(),
    position: 0,
    elapsed_ms: null,
    watch_ms: null,
    bitrate: null,
    rendition: null,
    error_code: null,
    workspace_id: null,
    viewer_hash: null,
    browser: null,
    os: null,
    device: null,
    player: null,
    player_height: null,
    latency_ms: null,
    country: null,
    ...e,
  };
}

/** A WHEP session answered 201 whose ICE has not completed yet: not a view (yet). */
interface Pending {
  viewId: string;
  liveStreamId: string;
  session: string;
  postedAt: number;
  /** Its `viewstart`, made at the POST (the viewer's hash needs the address, which is not kept), written at connection. */
  start: (now: Date) => RawEvent;
}

/** How often a process asks the edge whether its pending WHEP sessions have connected. */
export const WHEP_CONNECT_POLL_MS = 1000;
/** A pending session not connected by then is forgotten (the edge frees it at its ICE timeout, 10 s by default). */
export const WHEP_PENDING_MAX_MS = 30_000;

/**
 * WHEP viewers counted server-side (issue 35): a WHEP player may send no beacon, so the API writes
 * the SPEC §18 events of its view into the beacons' buffer — `viewstart` (player `whep`, the
 * day-salted viewer hash, browser/OS/device and country; no address) once the edge reports the
 * session connected (ICE complete: SPEC §22, a session that never connects is never a view, its
 * watch time and concurrency nothing), a `heartbeat` every WHEP_HEARTBEAT_MS while the session
 * lasts (concurrent viewers and the per-minute series count views with recent events,
 * lib/analytics/live.ts), and `viewend` on the DELETE. A viewer who leaves without DELETE is ended
 * when the edge no longer lists its session (the edge closes a session whose connection failed
 * or closed; an older edge that lists none reports a count, and the oldest held views are ended
 * first). A view ended by a DELETE through another API process is seen in Postgres.
 */
export class WhepViews {
  private readonly held = new Map<string, Held>();
  private readonly pending = new Map<string, Pending>();
  private readonly timer: NodeJS.Timeout;
  private readonly connectTimer: NodeJS.Timeout;
  private ticking?: Promise<void>;
  private polling?: Promise<void>;

  constructor(
    private readonly deps: { config: Config; db: Db; log: Logger; beacons: BeaconBuffer; salt: DailySalt },
    beatMs = WHEP_HEARTBEAT_MS,
    pollMs = WHEP_CONNECT_POLL_MS,
  ) {
    this.timer = setInterval(() => void this.tick(), beatMs);
    this.timer.unref();
    this.connectTimer = setInterval(() => void this.poll(), pollMs);
    this.connectTimer.unref();
  }

  /** Views this process is writing heartbeats for. */
  get size(): number {
    return this.held.size;
  }

  /** Sessions answered 201 whose connection this process is waiting for. */
  get waiting(): number {
    return this.pending.size;
  }

  /** The edge answered 201: the view starts when the session connects (poll). */
  async start(liveStreamId: string, workspaceId: string, session: string, viewer: WhepViewer): Promise<void> {
    const viewId = whepViewId(liveStreamId, session);
    const salt = await this.deps.salt.get(Date.now());
    const agent = classifyAgent(viewer.userAgent);
    const hash = viewerHash(salt, viewer.address, viewer.userAgent, workspaceId);
    const country = countryOf(viewer.address);
    const start = (now: Date) =>
      row({
        view_id: viewId,
        seq: 0,
        subject_id: liveStreamId,
        event: 'viewstart',
        elapsed_ms: 0,
        watch_ms: 0,
        workspace_id: workspaceId,
        viewer_hash: hash,
        browser: agent.browser,
        os: agent.os,
        device: agent.device,
        player: 'whep',
        country,
      }, now);
    this.pending.set(viewId, { viewId, liveStreamId, session, postedAt: Date.now(), start });
  }

  /**
   * The DELETE of a session. One this process holds ends now; one that never connected leaves no
   * row; one another process holds is ended by that process's next beat (the edge no longer lists
   * it) — a `viewend` written here for a view that may never have started would count as a viewer
   * in that minute's concurrent series.
   */
  end(liveStreamId: string, session: string): void {
    const viewId = whepViewId(liveStreamId, session);
    if (this.pending.delete(viewId)) return;
    const h = this.held.get(viewId);
    if (!h) return;
    this.held.delete(viewId);
    this.deps.beacons.push([this.endRow(viewId, liveStreamId, h, new Date())]);
  }

  private endRow(viewId: string, liveStreamId: string, h: Held, now: Date): RawEvent {
    const elapsed = now.getTime() - h.startedAt;
    return row({ view_id: viewId, seq: WHEP_END_SEQ, subject_id: liveStreamId, event: 'viewend', elapsed_ms: elapsed, watch_ms: elapsed, position: elapsed / 1000 }, now);
  }

  /** Asks the edge which pending sessions have connected: those become views now. */
  poll(): Promise<void> {
    this.polling ??= this.connect()
      .catch((err) => this.deps.log.warn({ err }, 'WHEP views: the connection poll failed; the next one retries'))
      .finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async connect(): Promise<void> {
    if (this.pending.size === 0) return;
    const now = new Date();
    const streams = new Set([...this.pending.values()].map((p) => p.liveStreamId));
    const out: RawEvent[] = [];
    for (const liveStreamId of streams) {
      const stats = await edgeStreamStats(this.deps.config, liveStreamId).catch(() => undefined);
      if (stats === undefined) continue; // the edge did not answer: ask again next time
      // An older edge lists no sessions: its count is all there is, as at the 201 before.
      const connected = stats ? new Set(stats.whep_sessions ?? [...this.pending.values()].filter((p) => p.liveStreamId === liveStreamId).map((p) => p.session)) : new Set<string>();
      for (const p of [...this.pending.values()].filter((x) => x.liveStreamId === liveStreamId)) {
        if (connected.has(p.session)) {
          this.pending.delete(p.viewId);
          out.push(p.start(now));
          this.held.set(p.viewId, { viewId: p.viewId, liveStreamId, seq: 0, startedAt: now.getTime(), session: p.session });
        } else if (now.getTime() - p.postedAt > WHEP_PENDING_MAX_MS) this.pending.delete(p.viewId);
      }
    }
    if (out.length) this.deps.beacons.push(out);
  }

  tick(): Promise<void> {
    this.ticking ??= this.beat()
      .catch((err) => this.deps.log.warn({ err }, 'WHEP views heartbeat failed; next beat retries'))
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async beat(): Promise<void> {
    await this.poll();
    if (this.held.size === 0) return;
    const ids = [...this.held.keys()];
    // Ended by a DELETE that another process answered (its viewend is written within ANALYTICS_FLUSH_MS).
    const { rows } = await this.deps.db.raw(`select view_id from analytics_events where view_id = any(?::uuid[]) and seq = ?`, [ids, WHEP_END_SEQ]);
    for (const r of rows as Array<{ view_id: string }>) this.held.delete(r.view_id);
    const byStream = new Map<string, Held[]>();
    for (const h of this.held.values()) byStream.set(h.liveStreamId, [...(byStream.get(h.liveStreamId) ?? []), h]);
    const now = new Date();
    const out: RawEvent[] = [];
    for (const [liveStreamId, views] of byStream) {
      let stats: Awaited<ReturnType<typeof edgeStreamStats>>;
      try {
        stats = await edgeStreamStats(this.deps.config, liveStreamId);
      } catch {
        continue; // the edge did not answer: no beat for these (they leave the concurrent count after 30 s) and no end either
      }
      let gone: Held[];
      if (stats?.whep_sessions) {
        const on = new Set(stats.whep_sessions);
        gone = views.filter((h) => !on.has(h.session));
      } else {
        views.sort((a, b) => a.startedAt - b.startedAt);
        gone = views.slice(0, Math.max(0, views.length - (stats?.whep_viewers ?? 0)));
      }
      for (const h of views) {
        if (gone.includes(h)) {
          this.held.delete(h.viewId);
          out.push(this.endRow(h.viewId, liveStreamId, h, now));
          continue;
        }
        const elapsed = now.getTime() - h.startedAt;
        h.seq = Math.min(h.seq + 1, WHEP_END_SEQ - 1);
        out.push(row({ view_id: h.viewId, seq: h.seq, subject_id: liveStreamId, event: 'heartbeat', elapsed_ms: elapsed, watch_ms: elapsed, position: elapsed / 1000 }, now));
      }
    }
    if (out.length) this.deps.beacons.push(out);
  }

  /** Stops the beats (the views then leave the concurrent count within 30 s); before the beacon buffer's close. */
  close(): void {
    clearInterval(this.timer);
    clearInterval(this.connectTimer);
  }
}
