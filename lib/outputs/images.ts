import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MediaTools } from '../media/tools';
import { animatedArgs, type FitMode, stillArgs, type StillFormat } from '../media/outputs';
import type { Db } from '../db';
import type { Storage } from '../storage';
import { recordDerived } from './derived';
import { outputKeys } from './keys';
import { type Lane, RenderBudget, RenderQueue, RenderRefused, type RenderLimits } from './renderQueue';
import { joinSegments, renditionSegments, segmentsFor } from './segments';

export type ImageRequest =
  | { kind: 'thumbnail'; ext: StillFormat; time: number; width?: number; height?: number; fit: FitMode }
  | { kind: 'animated'; ext: 'gif' | 'webp'; start: number; end: number; width: number; fps: number };

export interface ImageVideo {
  workspaceId: string;
  id: string;
  /** The ladder's renditions and, while the master lists it, the passthrough (`source`). */
  renditions: Array<{ name: string; width: number; height: number; status: string }>;
}

/** Who asks: the lane (a credential or not) and the client address, for the budgets. */
export interface Requester {
  lane: Lane;
  address: string;
}

/**
 * Rounds parameters so that nearby requests share one cached file (docs/outputs.md "Render
 * limits"): times to 0.1 s, animated widths to a multiple of 8 px. Thumbnail sizes stay exact:
 * the box a page lays out is the contract. `duration` bounds a rounded end.
 */
export function canonicalImage(req: ImageRequest, duration: number): ImageRequest {
  const t = (x: number) => Math.round(x * 10) / 10;
  if (req.kind === 'thumbnail') return { ...req, time: Math.min(t(req.time), Math.max(0, duration - 0.05)) };
  return { ...req, start: t(req.start), end: Math.min(t(req.end), duration), width: Math.max(8, Math.round(req.width / 8) * 8) };
}

/** Frames an animation would have: one per 1/fps seconds of the range. */
export const animationFrames = (req: { start: number; end: number; fps: number }) => Math.floor((req.end - req.start) * req.fps + 1e-6);

const CONTENT_TYPES: Record<string, string> = { jpg: 'image/jpeg', png: 'image/png', webp: 'image/webp', gif: 'image/gif' };
const ms = (s: number) => Math.round(s * 1000);

/** One name per set of parameters: the cache key in storage. */
export function imageName(req: ImageRequest): string {
  if (req.kind === 'thumbnail') return `thumbnail_t${ms(req.time)}_w${req.width ?? 0}_h${req.height ?? 0}_${req.fit}.${req.ext}`;
  return `animated_s${ms(req.start)}_e${ms(req.end)}_w${req.width}_f${req.fps}.${req.ext}`;
}

/** The smallest ready rendition at least as wide as the output, or the largest (≤ 1080p) otherwise. */
export function pickRendition(renditions: ImageVideo['renditions'], wantWidth: number): string | null {
  const ready = renditions.filter((r) => r.status === 'ready').sort((a, b) => a.width * a.height - b.width * b.height);
  const capped = ready.filter((r) => Math.min(r.width, r.height) <= 1080);
  const pool = capped.length > 0 ? capped : ready;
  return (pool.find((r) => r.width >= wantWidth) ?? pool[pool.length - 1])?.name ?? null;
}

/** ffmpeg runs made by this process, for tests and metrics: a cache hit adds none. */
export const imageRenders = { count: 0, failures: 0 };

/** SPEC §23: cuts a just-in-time segment of a rendition on demand (lib/playback/jit.ts); true when it now exists. */
export type EnsureSegment = (workspaceId: string, videoId: string, rung: string, name: string) => Promise<boolean>;

async function render(storage: Storage, media: MediaTools, video: ImageVideo, req: ImageRequest, output: string, dir: string, signal: AbortSignal, lane: Lane, ensure?: EnsureSegment): Promise<void> {
  const from = req.kind === 'thumbnail' ? req.time : req.start;
  const to = req.kind === 'thumbnail' ? req.time : req.end;
  const rung = pickRendition(video.renditions, req.width ?? (req.kind === 'thumbnail' && req.height ? 0 : 1280));
  if (!rung) throw new RenderRefused('unavailable', 5, 'The video has no rendition to render from yet; retry shortly');
  const segments = segmentsFor(await renditionSegments(storage, video.workspaceId, video.id, rung), from, to);
  const input = path.join(dir, 'input.ts');
  await joinSegments(storage, video.workspaceId, video.id, rung, segments, input, undefined, ensure ? (uri) => ensure(video.workspaceId, video.id, rung, uri) : undefined);
  const offset = Math.max(0, from - segments[0].start);
  // Our own segments, still opened as user media: allow-listed, sandboxed, bounded.
  const opened = await media.open(input, signal);
  const io = { input, inputArgs: opened.inputArgs, output };
  // An anonymous render yields the CPU (its sandbox's autogroup is niced) to a token or key
  // holder's, so a burst of public GIFs cannot slow the owner's thumbnail (issue 22 item 8).
  const run = { outputDir: dir, signal, durationSeconds: segments.reduce((sum, x) => sum + x.duration, 0), background: lane === 'anonymous' };
  const args =
    req.kind === 'thumbnail'
      ? stillArgs({ ...io, offset, width: req.width, height: req.height, fit: req.fit, format: req.ext })
      : animatedArgs({ ...io, offset, duration: req.end - req.start, width: req.width, fps: req.fps, format: req.ext });
  imageRenders.count++;
  await media.ffmpeg(args, opened, run);
  // A seek into the last frames of a stream can yield nothing; the segment's first frame will do.
  if (!(await fs.stat(output).catch(() => null)) && req.kind === 'thumbnail') {
    imageRenders.count++;
    await media.ffmpeg(stillArgs({ ...io, offset: 0, width: req.width, height: req.height, fit: req.fit, format: req.ext }), opened, run);
  }
  // ffmpeg can exit 0 having written nothing; never cache an empty image.
  if (!((await fs.stat(output).catch(() => null))?.size ?? 0)) throw new Error(`ffmpeg made no ${req.ext}`);
}

export interface ImageRenderer {
  ensureImage(video: ImageVideo, req: ImageRequest, who: Requester): Promise<{ key: string; contentType: string; cache: 'hit' | 'miss' | 'shared' }>;
  queue: RenderQueue;
}

/**
 * Renders run in the API process, so they are bounded (issue 22 item 8): the queue
 * (renderQueue.ts), per-minute budgets of cache misses per address and per video for anonymous
 * requests, a negative cache of failed renders (a broken render is not retried on every request),
 * and the derived files counted in the workspace's storage and capped per video (derived.ts).
 */
export function createImageRenderer(deps: { storage: Storage; media: MediaTools; db: Db; limits: RenderLimits; ensureSegment?: EnsureSegment }): ImageRenderer {
  const { storage, media, db, limits } = deps;
  const queue = new RenderQueue(limits);
  const budget = new RenderBudget();
  const inflight = new Map<string, Promise<'hit' | 'miss'>>();
  const failures = new Map<string, { until: number; message: string }>();

  const admit = (video: ImageVideo, who: Requester) => {
    if (who.lane === 'keyed') return;
    const byAddress = budget.take(`a:${who.address}`, limits.perAddressPerMinute);
    if (!byAddress.ok) throw new RenderRefused('over_budget', byAddress.retryAfterSeconds, `This address may have ${limits.perAddressPerMinute} new images rendered a minute; retry later`);
    const byVideo = budget.take(`v:${video.id}`, limits.perVideoPerMinute);
    if (!byVideo.ok) {
      budget.refund(`a:${who.address}`);
      throw new RenderRefused('over_budget', byVideo.retryAfterSeconds, `This video may have ${limits.perVideoPerMinute} new images rendered a minute; retry later`);
    }
  };

  const remember = (key: string, message: string) => {
    imageRenders.failures++;
    if (failures.size >= 1000) failures.delete(failures.keys().next().value!);
    failures.set(key, { until: Date.now() + limits.failureCacheMs, message });
  };

  const renderOnce = async (video: ImageVideo, req: ImageRequest, who: Requester, key: string): Promise<void> => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vidhost-img-'));
    try {
      const output = path.join(dir, `out.${req.ext}`);
      let timedOut = false;
      try {
        await queue.run(who.lane, async (signal) => {
          try {
            await render(storage, media, video, req, output, dir, signal, who.lane, deps.ensureSegment);
          } catch (err) {
            timedOut = signal.aborted;
            throw err;
          }
        });
      } catch (err) {
        if (err instanceof RenderRefused) throw err;
        if (timedOut) throw new RenderRefused('timeout', queue.retryAfter(who.lane), `The render took longer than ${limits.timeoutMs} ms; retry later`);
        remember(key, (err as Error).message);
        throw new RenderRefused('failed', Math.ceil(limits.failureCacheMs / 1000), 'The image could not be rendered');
      }
      const { size } = await fs.stat(output);
      await recordDerived(db, storage, video, size, limits.derivedMaxBytesPerVideo, () => storage.putFile(key, output, { contentType: CONTENT_TYPES[req.ext] }));
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  };

  return {
    queue,
    /**
     * The stored image for these parameters, rendered first if it is not there. Identical
     * requests that arrive while it renders wait for that one render (single flight, per process).
     */
    async ensureImage(video, req, who) {
      const key = outputKeys.derived(video.workspaceId, video.id, imageName(req));
      const contentType = CONTENT_TYPES[req.ext];
      const failed = failures.get(key);
      if (failed && failed.until > Date.now()) {
        throw new RenderRefused('failed', Math.max(1, Math.ceil((failed.until - Date.now()) / 1000)), 'The image could not be rendered (a recent attempt failed)');
      }
      const running = inflight.get(key);
      if (running) {
        await running;
        return { key, contentType, cache: 'shared' };
      }
      // Registered before the first await, so a request arriving during the cache lookup joins it.
      const job = (async () => {
        if (await storage.head(key)) return 'hit' as const;
        admit(video, who);
        await renderOnce(video, req, who, key);
        return 'miss' as const;
      })().finally(() => inflight.delete(key));
      inflight.set(key, job);
      return { key, contentType, cache: await job };
    },
  };
}
