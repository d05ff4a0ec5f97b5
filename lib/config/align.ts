// Captions by forced alignment (issue 37, docs/outputs.md "Captions from a transcript"): the aligner's bounds.
import { z } from 'zod';
import type { EnvOf } from './env';

export const alignEnv = {
  ALIGN_MAX_MINUTES: z.coerce.number().min(1).max(240).default(90),
  ALIGN_MAX_RSS_MB: z.coerce.number().int().min(128).default(1536),
  ALIGN_TIMEOUT_SECONDS_PER_MINUTE: z.coerce.number().min(1).default(60),
};

export interface AlignConfig {
  /** Longest audio the aligner takes (the API answers 422 `video_too_long` past it). */
  maxSeconds: number;
  /** The aligner process is killed past this resident size. */
  maxRssMb: number;
  /** Wall time allowed: one minute plus this much per minute of audio. */
  timeoutMsPerMinute: number;
}

export function alignConfig(e: EnvOf<typeof alignEnv>): AlignConfig {
  return { maxSeconds: e.ALIGN_MAX_MINUTES * 60, maxRssMb: e.ALIGN_MAX_RSS_MB, timeoutMsPerMinute: e.ALIGN_TIMEOUT_SECONDS_PER_MINUTE * 1000 };
}
