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
