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

/**
 * WHEP viewers counted server-side (issue 35): a WHEP player may send no beacon, so the API writes
 * the SPEC §18 events of its view into the beacons' buffer — `viewstart` (player `whep`, the
 * day-salted viewer hash, browser/OS/device and country; no address) when the edge answers the
 * POST 201, a `heartbeat` every WHEP_HEARTBEAT_MS while the session lasts (concurrent viewers and
 * the per-minute series count views with recent events, lib/analytics/live.ts), and `viewend`
 * on the DELETE. A viewer who leaves without DELETE is ended when the edge no longer has as many
 * WebRTC viewers of the stream as this process holds (the edge closes a session whose connection
 * failed or closed): the edge reports a count, not which session went, so the oldest held views
 * are ended first. A view ended by a DELETE through another API process is seen in Postgres.
 */
export class WhepViews {
  private readonly held = new Map<string, Held>();
  private readonly timer: NodeJS.Timeout;
  private ticking?: Promise<void>;

  constructor(
    private readonly deps: { config: Config; db: Db; log: Logger; beacons: BeaconBuffer; salt: DailySalt },
    beatMs = WHEP_HEARTBEAT_MS,
  ) {
    this.timer = setInterval(() => void this.tick(), beatMs);
    this.timer.unref();
  }

  /** Views this process is writing heartbeats for. */
  get size(): number {
    return this.held.size;
  }

  async start(liveStreamId: string, workspaceId: string, session: string, viewer: WhepViewer): Promise<void> {
    const now = new Date();
    const viewId = whepViewId(liveStreamId, session);
    const salt = await this.deps.salt.get(now.getTime());
    const agent = classifyAgent(viewer.userAgent);
    this.deps.beacons.push([
      row({
        view_id: viewId,
        seq: 0,
        subject_id: liveStreamId,
        event: 'viewstart',
        elapsed_ms: 0,
        watch_ms: 0,
        workspace_id: workspaceId,
        viewer_hash: viewerHash(salt, viewer.address, viewer.userAgent, workspaceId),
        browser: agent.browser,
        os: agent.os,
        device: agent.device,
        player: 'whep',
        country: countryOf(viewer.address),
      }, now),
    ]);
    this.held.set(viewId, { viewId, liveStreamId, seq: 0, startedAt: now.getTime() });
  }

  /** The DELETE of a session (whichever process started it). */
  end(liveStreamId: string, session: string): void {
    const viewId = whepViewId(liveStreamId, session);
    const h = this.held.get(viewId);
    this.held.delete(viewId);
    this.deps.beacons.push([this.endRow(viewId, liveStreamId, h, new Date())]);
  }

  private endRow(viewId: string, liveStreamId: string, h: Held | undefined, now: Date): RawEvent {
    const elapsed = h ? now.getTime() - h.startedAt : null;
    return row({ view_id: viewId, seq: WHEP_END_SEQ, subject_id: liveStreamId, event: 'viewend', elapsed_ms: elapsed, watch_ms: elapsed, position: (elapsed ?? 0) / 1000 }, now);
  }

  tick(): Promise<void> {
    this.ticking ??= this.beat()
      .catch((err) => this.deps.log.warn({ err }, 'WHEP views heartbeat failed; next beat retries'))
      .finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  private async beat(): Promise<void> {
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
      let onEdge: number;
      try {
        onEdge = (await edgeStreamStats(this.deps.config, liveStreamId))?.whep_viewers ?? 0;
      } catch {
        continue; // the edge did not answer: no beat for these (they leave the concurrent count after 30 s) and no end either
      }
      views.sort((a, b) => a.startedAt - b.startedAt);
      const gone = Math.max(0, views.length - onEdge);
      for (const h of views.slice(0, gone)) {
        this.held.delete(h.viewId);
        out.push(this.endRow(h.viewId, liveStreamId, h, now));
      }
      for (const h of views.slice(gone)) {
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
  }
}
