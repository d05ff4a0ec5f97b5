import { performance } from 'node:perf_hooks';
import { allReady, assertIntact, upload, waitVideo } from './flow';
import type { FaultStack } from './stack';

export interface LoadResult {
  uploads: number;
  seconds: number;
  /** 5xx other than 503 (must be 0). */
  fiveXX: number;
  /** 503s (+ Retry-After) the clients were told to retry: an overloaded Temporal or Postgres says so. */
  unavailable: number;
}

/**
 * `n` uploads at once, spread over the stack's APIs, from init to every rendition ready; then
 * the end state of each (one video.uploaded and one video.ready, segments as the playlists say).
 */
export async function runLoad(s: FaultStack, clip: string, n: number, timeoutMs: number): Promise<LoadResult> {
  const before = s.seen.length;
  const t0 = performance.now();
  const ids = await Promise.all(Array.from({ length: n }, (_, i) => upload(s, clip, { api: i % s.apis.length })));
  await Promise.all(ids.map((id, i) => waitVideo(s, id, allReady, timeoutMs, i % s.apis.length)));
  const seconds = (performance.now() - t0) / 1000;
  for (const id of ids) await assertIntact(s, id);
  const seen = s.seen.slice(before);
  const fiveXX = seen.filter((x) => x.status >= 500 && x.status !== 503).length;
  return { uploads: n, seconds, fiveXX, unavailable: seen.filter((x) => x.status === 503).length };
}
