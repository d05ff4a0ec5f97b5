// Pure: resource bounds on user media (SPEC §12) and the per-job limits derived from them.
import { MediaError } from './errors';
import type { RLimits } from './sandbox';

export type MediaLimits = {
  maxWidth: number;
  maxHeight: number;
  maxFps: number;
  maxDurationSeconds: number;
  /** A job may take this many times the media's duration (wall clock)... */
  wallTimeFactor: number;
  /** ...but never less than this (short clips, probes, thumbnails). */
  minWallSeconds: number;
  /** Per ffmpeg process. */
  maxMemoryBytes: number;
  maxOutputFileBytes: number;
  /** CPU seconds per wall second (the cores a job may keep busy). */
  cpuPerWallSecond: number;
};

export const DEFAULT_LIMITS: MediaLimits = Object.freeze({
  maxWidth: 8192,
  maxHeight: 8192,
  maxFps: 240,
  maxDurationSeconds: 12 * 3600,
  wallTimeFactor: 20,
  minWallSeconds: 300,
  maxMemoryBytes: 8 * 1024 ** 3,
  maxOutputFileBytes: 16 * 1024 ** 3,
  cpuPerWallSecond: 2,
});

export type Measured = { width: number; height: number; fps: number | null; durationSeconds: number | null };

const tooLarge = (what: string) => new MediaError('media_too_large', `The video exceeds a limit: ${what}`);

/** Throws MediaError('media_too_large') naming the first limit the media is beyond. */
export function checkBounds(info: Measured, limits: MediaLimits): void {
  if (info.width > limits.maxWidth) throw tooLarge(`width ${info.width} px is more than ${limits.maxWidth} px`);
  if (info.height > limits.maxHeight) throw tooLarge(`height ${info.height} px is more than ${limits.maxHeight} px`);
  if (info.fps !== null && info.fps > limits.maxFps) throw tooLarge(`frame rate ${info.fps} fps is more than ${limits.maxFps} fps`);
  if (info.durationSeconds !== null && info.durationSeconds > limits.maxDurationSeconds) {
    throw tooLarge(`duration ${Math.round(info.durationSeconds)} s is more than ${limits.maxDurationSeconds} s`);
  }
}

/** Wall-clock bound of one job on media of this duration (unknown: as long as the longest allowed). */
export function jobWallSeconds(durationSeconds: number | null | undefined, limits: MediaLimits): number {
  const d = durationSeconds && durationSeconds > 0 ? durationSeconds : limits.maxDurationSeconds;
  return Math.max(limits.minWallSeconds, Math.ceil(d * limits.wallTimeFactor));
}

/** rlimits of one process of a job with this wall bound. */
export function rlimitsFor(wallSeconds: number, limits: MediaLimits): RLimits {
  return {
    cpuSeconds: Math.ceil(wallSeconds * limits.cpuPerWallSecond),
    addressSpaceBytes: limits.maxMemoryBytes,
    fileSizeBytes: limits.maxOutputFileBytes,
  };
}
