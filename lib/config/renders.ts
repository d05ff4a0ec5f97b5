// On-demand images (issue 22 item 8, docs/outputs.md "Render limits"): the render queue, budgets, the derived-file cap.
import { z } from 'zod';
import type { RenderLimits } from '../outputs/renderQueue';
import type { EnvOf } from './env';

export const rendersEnv = {
  RENDER_CONCURRENCY: z.coerce.number().int().min(1).default(2),
  RENDER_ANONYMOUS_CONCURRENCY: z.coerce.number().int().min(1).default(1),
  RENDER_QUEUE_MAX: z.coerce.number().int().min(0).default(4),
  RENDER_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  RENDER_BUDGET_PER_ADDRESS_PER_MINUTE: z.coerce.number().int().min(1).default(6),
  RENDER_BUDGET_PER_VIDEO_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  RENDER_FAILURE_CACHE_SECONDS: z.coerce.number().int().min(1).default(60),
  DERIVED_MAX_MB_PER_VIDEO: z.coerce.number().min(1).default(64),
};

export function rendersConfig(e: EnvOf<typeof rendersEnv>): RenderLimits {
  return {
    concurrency: e.RENDER_CONCURRENCY,
    anonymousConcurrency: Math.min(e.RENDER_ANONYMOUS_CONCURRENCY, e.RENDER_CONCURRENCY),
    queueMax: e.RENDER_QUEUE_MAX,
    timeoutMs: e.RENDER_TIMEOUT_MS,
    perAddressPerMinute: e.RENDER_BUDGET_PER_ADDRESS_PER_MINUTE,
    perVideoPerMinute: e.RENDER_BUDGET_PER_VIDEO_PER_MINUTE,
    failureCacheMs: e.RENDER_FAILURE_CACHE_SECONDS * 1000,
    derivedMaxBytesPerVideo: Math.floor(e.DERIVED_MAX_MB_PER_VIDEO * 1024 * 1024),
  };
}
