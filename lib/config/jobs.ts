// SPEC §25 (docs/fairness.md "Bounds"): how many on-request jobs (alignments, added audio tracks,
// clips) may be in flight at once, per video and per workspace, before the API answers 429.
import { z } from 'zod';
import type { EnvOf } from './env';

export const jobsEnv = {
  JOBS_PER_VIDEO: z.coerce.number().int().min(1).default(4),
  JOBS_PER_WORKSPACE: z.coerce.number().int().min(1).default(16),
  JOBS_RETRY_AFTER_SECONDS: z.coerce.number().int().min(1).default(30),
};

export interface JobBounds {
  perVideo: number;
  perWorkspace: number;
  /** Retry-After of a refusal: about what a short job takes. */
  retryAfterSeconds: number;
}

export function jobsConfig(e: EnvOf<typeof jobsEnv>): JobBounds {
  return { perVideo: e.JOBS_PER_VIDEO, perWorkspace: Math.max(e.JOBS_PER_WORKSPACE, e.JOBS_PER_VIDEO), retryAfterSeconds: e.JOBS_RETRY_AFTER_SECONDS };
}
