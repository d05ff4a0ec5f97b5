// The dashboard room: sessions and sign-in throttling.
import { z } from 'zod';
import type { EnvOf } from './env';

export const dashboardEnv = {
  SESSION_TTL_HOURS: z.coerce.number().min(1).default(168),
  LOGIN_MAX_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).default(5),
  LOGIN_MAX_FAILURES_PER_IP: z.coerce.number().int().min(1).default(30),
  LOGIN_MAX_FAILURES_PER_EMAIL: z.coerce.number().int().min(1).default(100),
  LOGIN_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(900),
};

export interface DashboardConfig {
  sessionTtlSeconds: number;
  maxFailuresPerAccount: number;
  maxFailuresPerIp: number;
  maxFailuresPerEmail: number;
  failureWindowSeconds: number;
}

export function dashboardConfig(e: EnvOf<typeof dashboardEnv>): DashboardConfig {
  return {
    sessionTtlSeconds: Math.round(e.SESSION_TTL_HOURS * 3600),
    maxFailuresPerAccount: e.LOGIN_MAX_FAILURES_PER_ACCOUNT,
    maxFailuresPerIp: e.LOGIN_MAX_FAILURES_PER_IP,
    maxFailuresPerEmail: e.LOGIN_MAX_FAILURES_PER_EMAIL,
    failureWindowSeconds: e.LOGIN_FAILURE_WINDOW_SECONDS,
  };
}
