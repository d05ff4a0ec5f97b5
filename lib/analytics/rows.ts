import { classifyAgent } from './agent';
import type { BeaconBody, RawEvent } from './buffer';
import { countryOf } from './country';
import type { Resolved } from './subjects';
import { dayOf, viewerHash } from './viewer';

/**
 * A body's countable events as raw rows; events whose subject is not countable are dropped. The
 * `viewstart` row carries the viewer hash (needs the day's `salt`), the agent classes and the
 * country; the other rows only what changes.
 */
export function beaconRows(b: BeaconBody, resolved: ReadonlyMap<string, Resolved>, salt: Buffer | undefined): RawEvent[] {
  const receivedAt = b.receivedAt.toISOString();
  const day = dayOf(b.receivedAt);
  const rows: RawEvent[] = [];
  for (const e of b.events) {
    const s = resolved.get(e.subject);
    if (!s) continue;
    const start = e.event === 'viewstart';
    const agent = start ? classifyAgent(b.ua) : undefined;
    rows.push({
      day,
      received_at: receivedAt,
      view_id: e.view_id.toLowerCase(),
      seq: e.seq,
      subject_id: s.subjectId,
      event: e.event,
      position: e.position,
      elapsed_ms: e.elapsed_ms ?? null,
      watch_ms: e.watch_ms ?? null,
      bitrate: e.bitrate ?? null,
      rendition: e.rendition ?? null,
      error_code: e.error_code ?? null,
      workspace_id: start ? s.workspaceId : null,
      viewer_hash: start && salt ? viewerHash(salt, b.address, b.ua, s.workspaceId) : null,
      browser: agent?.browser ?? null,
      os: agent?.os ?? null,
      device: agent?.device ?? null,
      player: start ? `${e.player.name}${e.player.version ? ` ${e.player.version}` : ''}` : null,
      player_height: e.player_height ?? null,
      latency_ms: e.latency == null ? null : Math.round(e.latency * 1000),
      country: start ? countryOf(b.address) : null,
    });
  }
  return rows;
}

/**
 * Rows of bodies whose subjects (or the day's salt) were not in memory when they arrived: every
 * subject of every body looked up at once (lib/analytics/subjects.ts: one query per kind), then
 * the salt of each day. Runs in the buffer's flush, off the request (api/analytics/beacons.ts).
 */
export async function resolveBodies(
  subjects: { resolveAll(s: Iterable<string>): Promise<Map<string, Resolved>> },
  salt: { get(now: number): Promise<Buffer> },
  bodies: BeaconBody[],
): Promise<RawEvent[]> {
  const resolved = await subjects.resolveAll(bodies.flatMap((b) => b.events.map((e) => e.subject)));
  const salts = new Map<string, Buffer>();
  const rows: RawEvent[] = [];
  for (const b of bodies) {
    const day = dayOf(b.receivedAt);
    if (!salts.has(day) && b.events.some((e) => e.event === 'viewstart')) salts.set(day, await salt.get(b.receivedAt.getTime()));
    rows.push(...beaconRows(b, resolved, salts.get(day)));
  }
  return rows;
}
