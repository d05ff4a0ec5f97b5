// Just-in-time segments on the CDN (SPEC §23, docs/transcoding.md): a rendition published from
// its plan (`jit.json`, written by activities/transcode/jit.ts) has every segment listed before
// any is cut. The first request for a missing segment cuts it from the original (a stream copy
// of its keyframe range; audio: an AAC encode of the range) and stores it; every later request,
// in any API process, is a plain storage read. Cuts are bounded like the image renders (a queue
// per process) and made once: in-process single flight, and a Postgres advisory lock per segment
// across processes, taken before the cut and released by the database if the process dies. The
// segment is written whole (local: temp file + rename; S3: one PUT) or not at all.
import { readdirSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { isRemoteInput, safeInputArgs } from '../media/input';
import { JIT_PRESETS, jitCutArgs, jitCutOutput, jitSegmentIndex, jitSegmentName, MAX_JIT_SEGMENTS, type JitPlan } from '../media/jit';
import type { MediaTools } from '../media/tools';
import { RenderQueue, RenderRefused } from '../outputs/renderQueue';
import { keys, type Storage } from '../storage';

/** The plan beside a just-in-time rendition's playlist (never served: not in the CDN grammar). */
export const jitPlanKey = (renditionPrefix: string): string => `${renditionPrefix}jit.json`;
/** The audio rendition a source track plays from until its full encode is published (`a0` → `a0-jit`). */
export const jitAudioRendition = (rendition: string): string => `${rendition}-jit`;

const num = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** A stored plan, checked (it is ours, but a bad one must cut nothing). Null when absent or invalid. */
export function parseJitPlan(text: string): JitPlan | null {
  let p: Partial<JitPlan>;
  try {
    p = JSON.parse(text) as Partial<JitPlan>;
  } catch {
    return null;
  }
  if (p.version !== 1 || typeof p.storageKey !== 'string' || (p.kind !== 'video' && p.kind !== 'audio')) return null;
  if (!num(p.offset) || !num(p.durationSeconds) || !Array.isArray(p.boundaries) || p.boundaries.length === 0 || p.boundaries.length > MAX_JIT_SEGMENTS) return null;
  if (!p.boundaries.every((b, i) => num(b) && (i === 0 || b > p.boundaries![i - 1])) || p.boundaries[p.boundaries.length - 1] >= p.durationSeconds) return null;
  if (p.encode !== undefined) {
    const e = p.encode;
    const sizes = [e.width, e.height, e.videoBitrate, e.maxrate, e.bufsize];
    if (p.kind !== 'video' || !sizes.every((n) => num(n) && n > 0 && n <= 1e9) || !(JIT_PRESETS as readonly string[]).includes(e.preset)) return null;
    if (!(e.fps === null || (num(e.fps) && e.fps > 0 && e.fps <= 240)) || !(e.crf === null || (num(e.crf) && e.crf >= 0 && e.crf <= 51))) return null;
  }
  return p as JitPlan;
}

export async function readJitPlan(storage: Storage, renditionPrefix: string): Promise<JitPlan | null> {
  const object = await storage.get(jitPlanKey(renditionPrefix));
  if (!object) return null;
  const chunks: Buffer[] = [];
  for await (const c of object.body) chunks.push(c as Buffer);
  return parseJitPlan(Buffer.concat(chunks).toString('utf8'));
}

/** Segments encoded ahead of the one asked for (encoded plans only). */
export const ENCODE_LOOKAHEAD = 2;

export interface JitLimits {
  concurrency: number;
  queueMax: number;
  timeoutMs: number;
  /** Niceness of the cut's ffmpeg (below the VOD work's: a viewer waits for it). Default: the media policy's. */
  nice?: number;
}

/**
 * Cuts made by this process (tests and the bench read it): a stored or shared segment adds none;
 * `cancelled`: look-ahead cuts stopped because a viewer of the same rendition asked elsewhere.
 */
export const jitCuts = { count: 0, failures: 0, cancelled: 0 };

/** A cut's temp dir names its process, so a restarted API can remove what a killed one left. */
const TEMP_PREFIX = 'vidhost-jit-';
const tempPrefix = (): string => `${TEMP_PREFIX}${process.pid}-`;

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Removes the temp dirs of cuts whose process is gone (SIGKILLed mid-cut, its `finally` never ran):
 * each holds a partial segment. Dirs of live processes (another API on this machine) are left.
 */
export function sweepDeadCutDirs(dir = os.tmpdir()): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const m = /^vidhost-jit-(\d+)-/.exec(name);
    if (!m || Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    rmSync(path.join(dir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

export type JitOutcome = 'cut' | 'stored' | 'shared' | 'none';

export interface JitCutter {
  /**
   * Makes `<rung>/<name>` exist in storage if its rendition is just-in-time: `cut` (this call cut
   * it), `stored`/`shared` (another request or process did), `none` (no plan: a plain 404).
   * Throws RenderRefused when the queue is full, the cut timed out or failed.
   */
  ensure(workspaceId: string, videoId: string, rung: string, name: string): Promise<JitOutcome>;
  queue: RenderQueue;
}

export function createJitCutter(deps: { storage: Storage; media: MediaTools; db: Db; limits: JitLimits; formatCheck: boolean; log?: Logger }): JitCutter {
  const { storage, media, db, limits, log } = deps;
  const queue = new RenderQueue({ concurrency: limits.concurrency, anonymousConcurrency: limits.concurrency, queueMax: limits.queueMax, timeoutMs: limits.timeoutMs });
  const plans = new Map<string, { at: number; plan: Promise<JitPlan | null> }>();
  const inflight = new Map<string, Promise<JitOutcome>>();
  /** Look-ahead cuts in flight, by key: cancelled when a viewer of their rendition seeks elsewhere, unless someone waits on them. */
  const ahead = new Map<string, { prefix: string; index: number; stop: AbortController; awaited: boolean }>();
  const swept = sweepDeadCutDirs();
  if (swept.length) log?.warn({ dirs: swept.length }, 'jit: removed the temp dirs of cuts whose process died');

  /** Plans never change once written; a missing one is asked again after a few seconds. */
  const planOf = (prefix: string): Promise<JitPlan | null> => {
    const hit = plans.get(prefix);
    if (hit && Date.now() - hit.at < 5000) return hit.plan;
    const plan = readJitPlan(storage, prefix).then((p) => {
      if (p) plans.set(prefix, { at: Number.POSITIVE_INFINITY, plan: Promise.resolve(p) });
      return p;
    });
    if (plans.size >= 1000) plans.delete(plans.keys().next().value!);
    plans.set(prefix, { at: Date.now(), plan });
    return plan;
  };

  async function cut(plan: JitPlan, index: number, key: string, signal: AbortSignal): Promise<void> {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), tempPrefix()));
    try {
      const source = await storage.mediaSource(plan.storageKey);
      const inputArgs = deps.formatCheck ? safeInputArgs({ format: plan.demuxer, remote: isRemoteInput(source) }) : [];
      const input = { path: source, demuxer: plan.demuxer, inputArgs };
      const end = index + 1 < plan.boundaries.length ? plan.boundaries[index + 1] : plan.durationSeconds;
      await media.ffmpeg(jitCutArgs({ plan, index, input: source, inputArgs, outputDir: dir }), input, { outputDir: dir, durationSeconds: end - plan.boundaries[index] + 1, signal, nice: limits.nice });
      const out = path.join(dir, jitCutOutput(plan));
      const size = (await fs.stat(out).catch(() => null))?.size ?? 0;
      if (size === 0) throw new Error(`the cut of ${key} made nothing`);
      await storage.putFile(key, out, { contentType: 'video/mp2t' });
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  }

  /** The cut under the segment's lock: whoever holds it first cuts; the others find it stored. */
  async function lockedCut(plan: JitPlan, index: number, key: string, videoId: string, signal: AbortSignal): Promise<JitOutcome> {
    return db.transaction(async (tx) => {
      await tx.raw(`set local lock_timeout = ${Math.max(1, Math.floor(limits.timeoutMs))}`);
      await tx.raw('select pg_advisory_xact_lock(hashtext(?))', [`jit:${key}`]);
      if (await storage.head(key)) return 'shared' as const;
      jitCuts.count++;
      const t0 = Date.now();
      try {
        await cut(plan, index, key, signal);
      } catch (err) {
        jitCuts.failures++;
        throw err;
      }
      log?.info({ key, ms: Date.now() - t0 }, 'jit: segment cut');
      // A deletion that ran during the cut has already swept the folder: leave nothing behind.
      const row = await tx('videos').where({ id: videoId }).first('deleted_at');
      if (!row || row.deleted_at) await storage.deletePrefix(key).catch(() => undefined);
      return 'cut' as const;
    });
  }

  /**
   * One segment made to exist (single flight in this process, the lock across processes).
   * `lookahead`: nobody asked for it yet; it may be cancelled until someone does.
   */
  function ensureOne(plan: JitPlan, prefix: string, index: number, videoId: string, lookahead = false): Promise<JitOutcome> {
    const key = prefix + jitSegmentName(index);
    const running = inflight.get(key);
    if (running) {
      const entry = ahead.get(key);
      // A look-ahead being cancelled is let go; the asked cut starts once it has unwound.
      if (entry?.stop.signal.aborted) return lookahead ? running : running.catch(() => undefined).then(() => ensureOne(plan, prefix, index, videoId));
      if (entry && !lookahead) entry.awaited = true;
      return running.then(() => 'shared' as const);
    }
    const stop = lookahead ? new AbortController() : undefined;
    if (stop) ahead.set(key, { prefix, index, stop, awaited: false });
    const job = (async (): Promise<JitOutcome> => {
      if (await storage.head(key)) return 'stored';
      let timedOut = false;
      try {
        return await queue.run('keyed', async (timeout) => {
          const signal = stop ? AbortSignal.any([timeout, stop.signal]) : timeout;
          if (signal.aborted) throw new Error('cancelled before it started');
          try {
            return await lockedCut(plan, index, key, videoId, signal);
          } catch (err) {
            timedOut = timeout.aborted;
            throw err;
          }
        });
      } catch (err) {
        if (stop?.signal.aborted) {
          jitCuts.cancelled++;
          log?.info({ key }, 'jit: look-ahead cancelled');
          throw new RenderRefused('failed', 1, 'The look-ahead cut was cancelled');
        }
        if (err instanceof RenderRefused) throw err;
        if (timedOut) throw new RenderRefused('timeout', queue.retryAfter('keyed'), `The segment took longer than ${limits.timeoutMs} ms to cut; retry`);
        throw new RenderRefused('failed', 2, `The segment could not be cut: ${(err as Error).message.slice(0, 200)}`);
      }
    })().finally(() => {
      inflight.delete(key);
      ahead.delete(key);
    });
    inflight.set(key, job);
    return job;
  }

  /**
   * A viewer asked for segment `index`: look-ahead cuts of the same rendition outside
   * [index, index + ENCODE_LOOKAHEAD] are for a position the viewer left (a seek), so they stop and
   * leave the CPU to this one. One another request waits on is kept.
   */
  function cancelStaleLookahead(prefix: string, index: number): void {
    for (const entry of ahead.values()) {
      if (entry.prefix !== prefix || entry.awaited || (entry.index >= index && entry.index <= index + ENCODE_LOOKAHEAD)) continue;
      entry.stop.abort();
    }
  }

  return {
    queue,
    async ensure(workspaceId, videoId, rung, name) {
      const prefix = keys.rendition(workspaceId, videoId, rung);
      const plan = await planOf(prefix);
      if (!plan) return 'none';
      const index = jitSegmentIndex(plan, name);
      if (index === null) return 'none';
      // Encoded segments (a source the passthrough cannot take) take about a second each: the
      // next ones start now, in the background, while the queue has room, so a player at 1x
      // finds them ready.
      if (plan.encode) cancelStaleLookahead(prefix, index);
      const asked = ensureOne(plan, prefix, index, videoId);
      if (plan.encode) {
        // After the asked one, so it has the CPU to itself; while the queue has room.
        const lookahead = () => {
          for (let j = 1; j <= ENCODE_LOOKAHEAD && index + j < plan.boundaries.length; j++) {
            const stats = queue.stats();
            if (stats.active.keyed + stats.queued.keyed >= limits.concurrency) break;
            ensureOne(plan, prefix, index + j, videoId, true).catch(() => undefined);
          }
        };
        asked.then(lookahead, () => undefined);
      }
      return asked;
    },
  };
}
