// Webhooks (SPEC §9): the retry schedule and timeout; loopback URLs (webhooks, imports) for tests.
import { z } from 'zod';
import { bool, type EnvOf, parseDurationList } from './env';

export const webhooksEnv = {
  WEBHOOK_RETRY_SCHEDULE: z.string().default('5s,5m,30m,2h,5h,10h,14h,20h,24h'),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(1).default(15_000),
  ALLOW_LOOPBACK_URLS: bool.default(false),
};

export interface WebhooksConfig {
  webhooks: { retryScheduleMs: number[]; timeoutMs: number };
  allowLoopbackUrls: boolean;
}

export function webhooksConfig(e: EnvOf<typeof webhooksEnv>): WebhooksConfig {
  return {
    webhooks: { retryScheduleMs: parseDurationList(e.WEBHOOK_RETRY_SCHEDULE), timeoutMs: e.WEBHOOK_TIMEOUT_MS },
    allowLoopbackUrls: e.ALLOW_LOOPBACK_URLS,
  };
}
