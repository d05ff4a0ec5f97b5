import type { Db } from '../db';
import { parseId, parseVideoId } from '../ids';
import type { AccessCache } from '../playback/accessCache';
import { looksLikeToken } from '../playback/tokens';

/** What a beacon's subject resolves to: the workspace and the stored subject id, or nothing countable. */
export type Resolved = { workspaceId: string; subjectId: string } | null;

/**
 * Which subjects a request's beacons may count for (SPEC §18), at a bounded cost whatever the
 * body names (issue 33 row 8: 100 random ids a request cost 100 queries):
 * - `vid_…`: a decision the CDN's access cache already holds costs nothing; the other ids are
 *   checked for existence in **one query for the whole request**, and the ids that name no video
 *   (or a deleted one) are remembered as unknown for `ttlMs`, so a flood of forged ids costs at
 *   most one query a request and repeats cost none. Only ids of existing videos go on to the access
 *   decision (lib/playback/access.ts: public/unlisted count, private do not), which is cached.
 * - a playback token: the access decision; a forged token fails its signature check before any query.
 * - `ls_…`: a stream that exists, is not deleted and is not private (a private stream's embed page
 *   plays nothing; a viewer with a token plays the recording video, whose token is the subject).
 *   Answers, found or not, are kept `ttlMs`; the misses of a request are one query.
 * The remembered answers are bounded (`max`, oldest out first): a stream made private stops
 * counting, and an undeleted video starts counting again, within `ttlMs` (10 s).
 */
export class BeaconSubjects {
  private readonly known = new Map<string, { value: Resolved; expiresAt: number }>();
  /** Lookups made (one per query): for tests and the docs' cost claim. */
  queries = 0;

  constructor(
    private readonly db: Db,
    private readonly access: Pick<AccessCache, 'peek' | 'resolve'>,
    private readonly ttlMs = 10_000,
    private readonly max = 50_000,
  ) {}

  private remembered(key: string, now: number): { value: Resolved } | undefined {
    const hit = this.known.get(key);
    if (!hit) return undefined;
    if (hit.expiresAt > now) return hit;
    this.known.delete(key);
    return undefined;
  }

  private remember(key: string, value: Resolved, now: number): void {
    if (this.known.size >= this.max) this.known.delete(this.known.keys().next().value!);
    this.known.set(key, { value, expiresAt: now + this.ttlMs });
  }

  /**
   * Every subject's answer from memory alone (remembered ids and streams, the access cache's
   * settled decisions), or undefined when any of them needs a lookup: the caller then defers the
   * body to the buffer's flush (lib/analytics/buffer.ts), which calls `resolveAll`.
   */
  fromMemory(subjects: Iterable<string>, now = Date.now()): Map<string, Resolved> | undefined {
    const out = new Map<string, Resolved>();
    for (const subject of new Set(subjects)) {
      if (subject.startsWith('ls_')) {
        const id = parseId('ls', subject);
        const hit = id ? this.remembered(`ls:${id}`, now) : { value: null };
        if (!hit) return undefined;
        out.set(subject, hit.value);
        continue;
      }
      const token = looksLikeToken(subject);
      const uuid = token ? undefined : parseVideoId(subject);
      if (!token && (!uuid || this.remembered(`v:${uuid}`, now))) {
        out.set(subject, null);
        continue;
      }
      const peek = this.access.peek(token ? { token: subject } : { id: subject });
      if (peek?.kind !== 'ok') return undefined;
      out.set(subject, { workspaceId: peek.video.workspace_id, subjectId: peek.video.id });
    }
    return out;
  }

  async resolveAll(subjects: Iterable<string>, now = Date.now()): Promise<Map<string, Resolved>> {
    const out = new Map<string, Resolved>();
    const videos = new Map<string, string>(); // subject → uuid, still to check
    const streams = new Map<string, string>(); // subject → ls id, still to check
    const decisions: Array<Promise<void>> = [];
    const decide = (subject: string, ref: { id?: string; token?: string }) =>
      decisions.push(
        this.access.resolve(ref).then((a) => void out.set(subject, a.kind === 'ok' ? { workspaceId: a.video.workspace_id, subjectId: a.video.id } : null)),
      );
    for (const subject of new Set(subjects)) {
      if (subject.startsWith('ls_')) {
        const id = parseId('ls', subject);
        const hit = id ? this.remembered(`ls:${id}`, now) : { value: null };
        if (hit) out.set(subject, hit.value);
        else streams.set(subject, id!);
      } else if (looksLikeToken(subject)) {
        decide(subject, { token: subject });
      } else {
        const uuid = parseVideoId(subject);
        const peek = uuid ? this.access.peek({ id: subject }) : undefined;
        if (!uuid || this.remembered(`v:${uuid}`, now)) out.set(subject, null);
        else if (peek?.kind === 'ok') out.set(subject, { workspaceId: peek.video.workspace_id, subjectId: peek.video.id });
        else videos.set(subject, uuid);
      }
    }
    // Every subject answered from memory (the common case: a known video, its access cached).
    if (videos.size === 0 && streams.size === 0 && decisions.length === 0) return out;
    const lookups: Array<Promise<void>> = [];
    if (videos.size) {
      this.queries++;
      lookups.push(
        this.db.raw(`select id from videos where id = any(?::uuid[]) and deleted_at is null`, [[...new Set(videos.values())]]).then(({ rows }) => {
          const found = new Set((rows as Array<{ id: string }>).map((r) => r.id));
          for (const [subject, uuid] of videos) {
            if (found.has(uuid)) decide(subject, { id: subject });
            else {
              this.remember(`v:${uuid}`, null, now);
              out.set(subject, null);
            }
          }
        }),
      );
    }
    if (streams.size) {
      this.queries++;
      lookups.push(
        this.db.raw(`select id, workspace_id from live_streams where id = any(?) and deleted_at is null and visibility <> 'private'`, [[...new Set(streams.values())]]).then(({ rows }) => {
          const found = new Map((rows as Array<{ id: string; workspace_id: string }>).map((r) => [r.id, r.workspace_id]));
          for (const [subject, id] of streams) {
            const workspaceId = found.get(id);
            const value = workspaceId ? { workspaceId, subjectId: id } : null;
            this.remember(`ls:${id}`, value, now);
            out.set(subject, value);
          }
        }),
      );
    }
    await Promise.all(lookups);
    await Promise.all(decisions);
    return out;
  }
}
