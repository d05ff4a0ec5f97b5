// A just-in-time rendition's plan (`jit.json` beside its playlist, written by
// activities/transcode/jit.ts and onRequest.ts, never served: the CDN grammar has no such name),
// read and checked before anything is cut from it.
import { JIT_PRESETS, MAX_JIT_SEGMENTS, type JitPlan } from '../media/jit';
import type { Storage } from '../storage';

/** The plan beside a just-in-time rendition's playlist. */
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
  if (p.start !== undefined && !(num(p.start) && Math.abs(p.start) < 86_400)) return null;
  if (p.midGop !== undefined && !(Array.isArray(p.midGop) && p.midGop.every((i) => Number.isInteger(i) && i > 0 && i < p.boundaries!.length))) return null;
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
