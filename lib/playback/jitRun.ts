// One just-in-time cut's process (lib/playback/jit.ts): its temp dir, named for its process so a
// restarted API can remove what a killed one left, and its ffmpeg. A stream copy or an audio
// segment is one file made whole; an encoded run makes several segments one after the other and
// hands each over the moment it is complete, so the viewer waiting for the first never waits for
// the ones encoded ahead of it.
import { readdirSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isRemoteInput, safeInputArgs } from '../media/input';
import { jitCutArgs, jitCutOutput, type JitPlan } from '../media/jit';
import { onRequestEncodeArgs, onRequestOutput } from '../media/jitEncode';
import { withMark } from '../watermarks/local';
import type { MediaTools } from '../media/tools';
import type { Storage } from '../storage';

const TEMP_PREFIX = 'vidhost-jit-';
const tempPrefix = (): string => `${TEMP_PREFIX}${process.pid}-`;
/** How often an encoded run looks for a finished segment. */
const POLL_MS = 20;

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

export interface CutDeps {
  storage: Storage;
  media: MediaTools;
  formatCheck: boolean;
  /** Niceness of the cut's ffmpeg (0: as the API; a viewer waits for it). */
  nice?: number;
}

const end = (plan: JitPlan, index: number) => (index + 1 < plan.boundaries.length ? plan.boundaries[index + 1] : plan.durationSeconds);

/**
 * Segments `first`…`last` of the plan (one, unless the plan is encoded), each handed to `done`
 * (with its file) once complete, in order. Rejects when ffmpeg fails or `signal` aborts; what was
 * handed over before stays handed over.
 */
export async function cutSegments(deps: CutDeps, plan: JitPlan, first: number, last: number, signal: AbortSignal, done: (index: number, file: string) => Promise<void>): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), tempPrefix()));
  try {
    const source = await deps.storage.mediaSource(plan.storageKey);
    const inputArgs = deps.formatCheck ? safeInputArgs({ format: plan.demuxer, remote: isRemoteInput(source) }) : [];
    const input = { path: source, demuxer: plan.demuxer, inputArgs };
    const run = { outputDir: dir, durationSeconds: end(plan, last) - plan.boundaries[first] + 1, nice: deps.nice };
    if (!plan.encode) {
      await deps.media.ffmpeg(jitCutArgs({ plan, index: first, input: source, inputArgs, outputDir: dir }), input, { ...run, signal });
      await done(first, await whole(path.join(dir, jitCutOutput(plan))));
      return;
    }
    const stop = new AbortController();
    const abort = () => stop.abort(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    // Stopped while it waited for its locks: an 'abort' that already happened never fires again.
    if (signal.aborted) abort();
    let next = first;
    let handing: Promise<void> = Promise.resolve();
    // A segment is complete once the muxer has opened the next one (it closes one before it opens the next).
    const handOver = async (exited: boolean): Promise<void> => {
      while (next <= last && (exited || (await exists(path.join(dir, onRequestOutput(next + 1)))))) {
        const index = next++;
        await done(index, await whole(path.join(dir, onRequestOutput(index))));
      }
    };
    const timer = setInterval(() => {
      handing = handing.then(() => handOver(false)).catch((err: unknown) => {
        stop.abort(err);
        throw err;
      });
    }, POLL_MS);
    try {
      // SPEC §24: the plan's mark, fetched beside the encode (the ladder's chunks burn the same one).
      const encode = plan.encode;
      await withMark(deps.storage, encode.mark, async (wm) => {
        const args = onRequestEncodeArgs({ plan: { ...plan, encode }, first, last, input: source, inputArgs, outputDir: dir, mark: wm?.mark });
        await deps.media.ffmpeg(args, input, { ...run, signal: stop.signal, readOnly: wm?.readOnly });
      });
    } finally {
      clearInterval(timer);
      signal.removeEventListener('abort', abort);
    }
    await handing;
    await handOver(true);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const exists = (file: string) => fs.stat(file).then(() => true, () => false);

/** The file, if ffmpeg wrote something into it. */
async function whole(file: string): Promise<string> {
  const size = (await fs.stat(file).catch(() => null))?.size ?? 0;
  if (size === 0) throw new Error(`the cut made no ${path.basename(file)}`);
  return file;
}
