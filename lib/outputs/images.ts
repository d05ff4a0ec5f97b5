import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MediaTools } from '../media/tools';
import { animatedArgs, type FitMode, stillArgs, type StillFormat } from '../media/outputs';
import type { Storage } from '../storage';
import { outputKeys } from './keys';
import { joinSegments, renditionSegments, segmentsFor } from './segments';

export type ImageRequest =
  | { kind: 'thumbnail'; ext: StillFormat; time: number; width?: number; height?: number; fit: FitMode }
  | { kind: 'animated'; ext: 'gif' | 'webp'; start: number; end: number; width: number; fps: number };

export interface ImageVideo {
  workspaceId: string;
  id: string;
  renditions: Array<{ name: string; width: number; height: number; status: string }>;
}

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
export const imageRenders = { count: 0 };

// Renders run in the API process: at most this many ffmpeg processes at once (the rest queue),
// each stopped after RENDER_TIMEOUT_MS, so a burst of distinct URLs cannot take the machine.
const MAX_CONCURRENT_RENDERS = 2;
const RENDER_TIMEOUT_MS = 60_000;
let active = 0;
const waiting: Array<() => void> = [];

async function withRenderSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (active >= MAX_CONCURRENT_RENDERS) await new Promise<void>((resolve) => waiting.push(resolve));
  active++;
  try {
    return await fn();
  } finally {
    active--;
    waiting.shift()?.();
  }
}
const inflight = new Map<string, Promise<'hit' | 'miss'>>();

async function render(storage: Storage, media: MediaTools, video: ImageVideo, req: ImageRequest, key: string): Promise<void> {
  const from = req.kind === 'thumbnail' ? req.time : req.start;
  const to = req.kind === 'thumbnail' ? req.time : req.end;
  const rung = pickRendition(video.renditions, req.width ?? (req.kind === 'thumbnail' && req.height ? 0 : 1280));
  if (!rung) throw new Error('the video has no ready rendition');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vidhost-img-'));
  try {
    const segments = segmentsFor(await renditionSegments(storage, video.workspaceId, video.id, rung), from, to);
    const input = path.join(dir, 'input.ts');
    await joinSegments(storage, video.workspaceId, video.id, rung, segments, input);
    const output = path.join(dir, `out.${req.ext}`);
    const offset = Math.max(0, from - segments[0].start);
    const signal = AbortSignal.timeout(RENDER_TIMEOUT_MS);
    // Our own segments, still opened as user media: allow-listed, sandboxed, bounded.
    const opened = await media.open(input, signal);
    const io = { input, inputArgs: opened.inputArgs, output };
    const run = { outputDir: dir, signal, durationSeconds: segments.reduce((sum, x) => sum + x.duration, 0) };
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
    if (!((await fs.stat(output).catch(() => null))?.size ?? 0)) throw new Error(`ffmpeg made no ${req.ext} for ${key}`);
    await storage.putFile(key, output, { contentType: CONTENT_TYPES[req.ext] });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * The stored image for these parameters, rendered first if it is not there. Identical requests
 * that arrive while it renders wait for that one render (single flight, per process).
 */
export async function ensureImage(
  deps: { storage: Storage; media: MediaTools },
  video: ImageVideo,
  req: ImageRequest,
): Promise<{ key: string; contentType: string; cache: 'hit' | 'miss' | 'shared' }> {
  const key = outputKeys.derived(video.workspaceId, video.id, imageName(req));
  const contentType = CONTENT_TYPES[req.ext];
  const running = inflight.get(key);
  if (running) {
    await running;
    return { key, contentType, cache: 'shared' };
  }
  // Registered before the first await, so a request arriving during the cache lookup joins it.
  const job = (async () => {
    if (await deps.storage.head(key)) return 'hit' as const;
    await withRenderSlot(() => render(deps.storage, deps.media, video, req, key));
    return 'miss' as const;
  })().finally(() => inflight.delete(key));
  inflight.set(key, job);
  return { key, contentType, cache: await job };
}
