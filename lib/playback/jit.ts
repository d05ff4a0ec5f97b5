// Just-in-time segments on the CDN (SPEC §23, docs/transcoding.md): a rendition published from
// its plan (`jit.json`) has every segment listed before any is made. The first request for a
// missing segment makes it from the original (a stream copy of its keyframe range; audio: an AAC
// encode of the range; an on-request rung: an encode of the range, lib/media/jitEncode.ts) and
// stores it; every later request, in any API process, is a plain storage read. Cuts are bounded
// like the image renders (a queue per process) and made once: in-process single flight, and a
// Postgres advisory lock per segment across processes (lib/playback/jitLock.ts), released by the
// database if the process dies. A segment is written whole (local: temp file + rename; S3: one
// PUT) or not at all.
import type { Db } from '../db';
import type { Logger } from '../logger';
import { jitSegmentIndex, jitSegmentName, type JitPlan } from '../media/jit';
import type { MediaTools } from '../media/tools';
import { RenderQueue, RenderRefused } from '../outputs/renderQueue';
import { keys, type Storage } from '../storage';
import { createLockPool, type SegmentLocks } from './jitLock';
import { readJitPlan } from './jitPlan';
import { cutSegments, sweepDeadCutDirs } from './jitRun';

export { jitAudioRendition, jitPlanKey, parseJitPlan, readJitPlan } from './jitPlan';
export { sweepDeadCutDirs } from './jitRun';

/** Segments encoded ahead of the one asked for (encoded plans only). */
export const ENCODE_LOOKAHEAD = 2;
/** A look-ahead run reaches on to the next segment that starts at a source keyframe, up to this many segments. */
const MAX_LOOKAHEAD = 5;

export interface JitLimits {
  concurrency: number;
  queueMax: number;
  timeoutMs: number;
  /** Niceness of a stream copy or audio cut's ffmpeg. On-request encodes run at the API's own (0). */
  nice?: number;
}

/**
 * Segments made by this process (tests and the bench read it): a stored or shared segment adds
 * none; `cancelled`: look-ahead segments not made because their viewer asked for another position.
 */
export const jitCuts = { count: 0, failures: 0, cancelled: 0 };

export type JitOutcome = 'cut' | 'stored' | 'shared' | 'none';

export interface JitCutter {
  /**
   * Makes `<rung>/<name>` exist in storage if its rendition is just-in-time: `cut` (this call cut
   * it), `stored`/`shared` (another request or process did), `none` (no plan: a plain 404).
   * `viewer` (the client and the path's subject): a request of that viewer elsewhere in the video
   * cancels the look-ahead its earlier requests started. Throws RenderRefused when the queue is
   * full, the cut timed out or failed.
   */
  ensure(workspaceId: string, videoId: string, rung: string, name: string, viewer?: string): Promise<JitOutcome>;
  /**
   * The short side of the rung an encoded plan makes under `<rung>/`, or null (no plan, or a copy
   * of the source). Videos made before the on-request rungs play their lowest rung encoded on
   * request under `source/` (SPEC §23): a token's `max_resolution` judges it by this size.
   */
  encodedSide(workspaceId: string, videoId: string, rung: string): Promise<number | null>;
  queue: RenderQueue;
  close(): Promise<void>;
}

/** One ffmpeg making segments `first`…`last` of a rendition. */
interface Run {
  videoId: string;
  prefix: string;
  first: number;
  last: number;
  viewer: string | undefined;
  /** Started ahead of the player: stopped when its viewer seeks, unless a request waits on it. */
  lookahead: boolean;
  awaited: boolean;
  stop: AbortController;
}

interface Pending {
  run: Run;
  promise: Promise<JitOutcome>;
}

export function createJitCutter(deps: { storage: Storage; media: MediaTools; db: Db; limits: JitLimits; formatCheck: boolean; log?: Logger }): JitCutter {
  const { storage, db, limits, log } = deps;
  const queue = new RenderQueue({ concurrency: limits.concurrency, anonymousConcurrency: limits.concurrency, queueMax: limits.queueMax, timeoutMs: limits.timeoutMs });
  // One lock connection per running cut, outside the API's query pool (issue 45).
  const locks = createLockPool(db, limits.concurrency, limits.timeoutMs);
  const plans = new Map<string, { at: number; plan: Promise<JitPlan | null> }>();
  const inflight = new Map<string, Pending>();
  const runs = new Set<Run>();
  /** Where each viewer (video and viewer) last asked for an encoded segment: look-ahead follows it. */
  const lastAsked = new Map<string, { prefix: string; index: number }>();
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

  /**
   * The run under its segments' locks: the first one waited for (whoever holds it first cuts it;
   * the others find it stored), the look-ahead's taken only if free. Resolves each segment's
   * promise as it is stored; a segment the run does not make (stored meanwhile, or another
   * process has it) settles as `shared` when stored, else is left to whoever asks next.
   */
  async function lockedRun(plan: JitPlan, run: Run, settle: Map<number, (o: JitOutcome | Error) => void>, signal: AbortSignal): Promise<void> {
    const held: SegmentLocks = await locks.open();
    let last = run.first - 1;
    try {
      const key = (i: number) => run.prefix + jitSegmentName(i);
      for (let i = run.first; i <= run.last; i++) {
        if (run.lookahead) {
          if (!(await held.tryLock(key(i)))) break;
        } else await held.lock(key(i));
        if (await storage.head(key(i))) {
          await held.unlock(key(i));
          settle.get(i)?.('shared');
          settle.delete(i);
          if (run.lookahead) break;
          continue;
        }
        last = i;
      }
      // What is left of the range after a stored or locked segment is not this run's.
      for (const [i, fn] of settle) if (i > last) fn(new Error('not this run\u2019s'));
      if (last < run.first) return;
      if (signal.aborted) throw new Error('stopped before its ffmpeg started');
      const t0 = Date.now();
      const written: string[] = [];
      await cutSegments({ storage, media: deps.media, formatCheck: deps.formatCheck, nice: plan.encode ? 0 : limits.nice }, plan, run.first, last, signal, async (i, file) => {
        await storage.putFile(key(i), file, { contentType: 'video/mp2t' });
        written.push(key(i));
        jitCuts.count++;
        log?.info({ key: key(i), ms: Date.now() - t0 }, 'jit: segment cut');
        await held.unlock(key(i)).catch(() => undefined);
        settle.get(i)?.('cut');
        settle.delete(i);
      });
      // A deletion that ran during the cut has already swept the folder: leave nothing behind.
      const row = await db('videos').where({ id: run.videoId }).first('deleted_at');
      if (!row || row.deleted_at) for (const k of written) await storage.deletePrefix(k).catch(() => undefined);
    } finally {
      await held.release();
    }
  }

  /** Starts a run of `first`…`last`, whose segments are not in flight; each segment's promise is registered at once. */
  function startRun(plan: JitPlan, prefix: string, first: number, last: number, videoId: string, viewer: string | undefined, lookahead: boolean): void {
    const run: Run = { videoId, prefix, first, last, viewer, lookahead, awaited: false, stop: new AbortController() };
    const settle = new Map<number, (o: JitOutcome | Error) => void>();
    for (let i = first; i <= last; i++) {
      const key = prefix + jitSegmentName(i);
      const pending: Pending = { run, promise: Promise.resolve('none') };
      pending.promise = new Promise<JitOutcome>((resolve, reject) =>
        settle.set(i, (o) => {
          // Out of the map before anyone waiting sees the outcome: a retry finds nothing in flight.
          if (inflight.get(key) === pending) inflight.delete(key);
          if (o instanceof Error) reject(o);
          else resolve(o);
        }),
      );
      // Look-ahead segments are often never asked for: their rejections are handled here.
      pending.promise.catch(() => undefined);
      inflight.set(key, pending);
    }
    runs.add(run);
    let timedOut = false;
    queue
      .run('keyed', async (timeout) => {
        // One controller for both (the time limit stops the run as a seek does), not a composite signal.
        const onTimeout = () => run.stop.abort(timeout.reason);
        timeout.addEventListener('abort', onTimeout, { once: true });
        try {
          if (run.stop.signal.aborted || timeout.aborted) throw new Error('cancelled before it started');
          await lockedRun(plan, run, settle, run.stop.signal);
        } catch (err) {
          timedOut = timeout.aborted;
          throw err;
        } finally {
          timeout.removeEventListener('abort', onTimeout);
        }
      })
      .catch((err: unknown) => {
        if (run.stop.signal.aborted && !timedOut) {
          // Per segment it did not make (what it finished before the seek stays stored).
          for (const i of settle.keys()) {
            jitCuts.cancelled++;
            log?.info({ key: prefix + jitSegmentName(i) }, 'jit: look-ahead cancelled');
          }
          return new RenderRefused('failed', 1, 'The look-ahead cut was cancelled');
        }
        if (err instanceof RenderRefused) return err;
        jitCuts.failures++;
        if (timedOut) return new RenderRefused('timeout', queue.retryAfter('keyed'), `The segment took longer than ${limits.timeoutMs} ms to cut; retry`);
        return new RenderRefused('failed', 2, `The segment could not be cut: ${(err as Error).message.slice(0, 200)}`);
      })
      .then((refusal) => {
        runs.delete(run);
        for (const fn of settle.values()) fn(refusal ?? new Error('the run ended without this segment'));
      });
  }

  /**
   * One segment made to exist (single flight in this process, the lock across processes). A
   * segment in flight in a look-ahead run is waited for, and that run is no longer cancelled; if
   * it does not make it after all, this request cuts it.
   */
  async function ensureOne(plan: JitPlan, prefix: string, index: number, videoId: string, viewer: string | undefined): Promise<JitOutcome> {
    const key = prefix + jitSegmentName(index);
    const running = inflight.get(key);
    if (running) {
      if (running.run.lookahead && !running.run.stop.signal.aborted) running.run.awaited = true;
      return running.promise.then(
        (o) => (o === 'cut' ? 'shared' : o),
        (err: unknown) => {
          if (!running.run.lookahead && err instanceof RenderRefused) throw err;
          return ensureOne(plan, prefix, index, videoId, viewer);
        },
      );
    }
    if (await storage.head(key)) return 'stored';
    // Another request may have started it while storage answered.
    if (inflight.has(key)) return ensureOne(plan, prefix, index, videoId, viewer);
    startRun(plan, prefix, index, index, videoId, viewer, false);
    return inflight.get(key)!.promise;
  }

  /**
   * A viewer asked for segment `index` of `prefix`: its look-ahead runs anywhere else in the video
   * (another position, another rung) are for where it no longer plays, so they stop and leave the
   * CPU to this one. A run another request waits on is kept.
   */
  function cancelStaleLookahead(videoId: string, viewer: string, prefix: string, index: number): void {
    for (const run of runs) {
      if (!run.lookahead || run.awaited || run.videoId !== videoId || run.viewer !== viewer) continue;
      if (run.prefix === prefix && index >= run.first - 1 && index <= run.last) continue;
      run.stop.abort();
    }
  }

  /** After segment `index`: the next ones in one run, reaching on to a segment that starts at a source keyframe. */
  async function lookahead(plan: JitPlan, prefix: string, index: number, videoId: string, viewer: string | undefined): Promise<void> {
    const stats = queue.stats();
    if (stats.active.keyed + stats.queued.keyed >= limits.concurrency) return;
    const n = plan.boundaries.length;
    const mid = new Set(plan.midGop ?? []);
    let last = Math.min(n - 1, index + ENCODE_LOOKAHEAD);
    while (last + 1 < n && last < index + MAX_LOOKAHEAD && mid.has(last + 1)) last++;
    let first = index + 1;
    // Skip what is stored; stop at what is in flight.
    while (first <= last && !inflight.has(prefix + jitSegmentName(first)) && (await storage.head(prefix + jitSegmentName(first)))) first++;
    let end = first - 1;
    while (end < last && !inflight.has(prefix + jitSegmentName(end + 1))) end++;
    // The viewer may have asked elsewhere while storage answered: then this is for where it left.
    const now = viewer === undefined ? undefined : lastAsked.get(`${videoId} ${viewer}`);
    if (now && (now.prefix !== prefix || now.index < index || now.index > end)) return;
    if (end >= first) startRun(plan, prefix, first, end, videoId, viewer, true);
  }

  return {
    queue,
    async ensure(workspaceId, videoId, rung, name, viewer) {
      const prefix = keys.rendition(workspaceId, videoId, rung);
      const plan = await planOf(prefix);
      if (!plan) return 'none';
      const index = jitSegmentIndex(plan, name);
      if (index === null) return 'none';
      if (plan.encode && viewer !== undefined) {
        cancelStaleLookahead(videoId, viewer, prefix, index);
        const who = `${videoId} ${viewer}`;
        lastAsked.delete(who);
        lastAsked.set(who, { prefix, index });
        if (lastAsked.size > 10_000) lastAsked.delete(lastAsked.keys().next().value!);
      }
      const asked = ensureOne(plan, prefix, index, videoId, viewer);
      // Encoded segments take about a second each: the next ones start now, in the background,
      // while the queue has room, so a player at 1x finds them ready.
      if (plan.encode) asked.then(() => lookahead(plan, prefix, index, videoId, viewer)).catch(() => undefined);
      return asked;
    },
    async encodedSide(workspaceId, videoId, rung) {
      const plan = await planOf(keys.rendition(workspaceId, videoId, rung));
      return plan?.encode ? Math.min(plan.encode.width, plan.encode.height) : null;
    },
    close: () => locks.close(),
  };
}
