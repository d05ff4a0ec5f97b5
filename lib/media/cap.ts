// Pure: imported by workflow code. SPEC §14 `max_resolution` caps the planned ladder.
import type { Rung } from './ladder';

export const MAX_RESOLUTIONS = ['480p', '720p', '1080p', '1440p', '2160p'] as const;
export type MaxResolution = (typeof MAX_RESOLUTIONS)[number];

/**
 * Drops rungs whose short side is above the cap ("1080p" keeps 1080p and below). The lowest rung
 * always stays, so a cap never leaves a video without a rendition.
 */
export function capLadder(rungs: readonly Rung[], cap: MaxResolution | null | undefined): Rung[] {
  if (!cap) return [...rungs];
  const limit = Number.parseInt(cap, 10);
  const kept = rungs.filter((r) => Math.min(r.width, r.height) <= limit);
  return kept.length > 0 ? kept : rungs.slice(0, 1);
}
