import { z } from 'zod';
import { MAX_RESOLUTIONS } from '../media/cap';

/** SPEC §14 settings accepted at creation; `mp4_support` and `passthrough` also by PATCH. */
export const MP4_SUPPORT = ['none', 'capped_1080p', 'audio_only'] as const;
export type Mp4Support = (typeof MP4_SUPPORT)[number];

export const mp4Support = z.enum(MP4_SUPPORT);
export const maxResolution = z.enum(MAX_RESOLUTIONS);
export const passthrough = z.string().max(255);

/** The static file each mp4_support value produces (Mux's names). */
export const STATIC_NAMES: Record<Exclude<Mp4Support, 'none'>, string> = {
  capped_1080p: 'capped_1080p.mp4',
  audio_only: 'audio.m4a',
};

const CAPPED_SHORT_SIDE = 1080;

/**
 * The rung a static file is cut from (activities/outputs/static.ts), so also the picture size of
 * a download (a token's `max_resolution`, api/cdn/outputs/routes.ts): the best ≤ 1080p for video;
 * the smallest for audio (all carry the same AAC).
 */
export function staticSourceRung<R extends { name: string; width: number; height: number; status: string }>(renditions: R[], name: string): R | undefined {
  const ready = renditions.filter((r) => r.status === 'ready').sort((a, b) => a.width * a.height - b.width * b.height);
  // An audio-only ladder (SPEC §19) has no pictures: its best AAC is the 128 kb/s rung.
  if (name === STATIC_NAMES.audio_only) return ready.find((r) => r.name === 'audio-128k') ?? ready[0];
  return ready.filter((r) => Math.min(r.width, r.height) <= CAPPED_SHORT_SIDE).pop() ?? ready[0];
}
