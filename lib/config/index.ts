// The configuration: every variable the processes read, validated once, typed and frozen. Each
// area declares its variables and builds its part in its own module; this file joins them and is
// the only place that reads process.env (lint enforces it). README "Configuration".
import { z } from 'zod';
import { alignConfig, alignEnv, type AlignConfig } from './align';
import { analyticsConfig, analyticsEnv, type AnalyticsConfig } from './analytics';
import { coreConfig, coreEnv, type CoreConfig } from './core';
import { dashboardConfig, dashboardEnv, type DashboardConfig } from './dashboard';
import { deepFreeze } from './env';
import { hotConfig, hotEnv, type HotConfig } from './hot';
import { jobsConfig, jobsEnv, type JobBounds } from './jobs';
import { liveConfig, liveEnv, type LiveConfig } from './live';
import { mediaConfig, mediaEnv, type MediaConfig } from './media';
import { protectionConfig, protectionEnv, type ProtectionConfig } from './protection';
import type { RenderLimits } from '../outputs/renderQueue';
import { rendersConfig, rendersEnv } from './renders';
import { storageConfig, storageEnv, type StorageConfig } from './storage';
import { temporalConfig, temporalEnv, type TemporalConfig } from './temporal';
import { uploadConfig, uploadEnv, type UploadConfig } from './upload';
import { webhooksConfig, webhooksEnv, type WebhooksConfig } from './webhooks';

export { parseDurationList } from './env';
export type { PlaybackKey } from './protection';

const schema = z.object({
  ...coreEnv,
  ...temporalEnv,
  ...storageEnv,
  ...uploadEnv,
  ...protectionEnv,
  ...hotEnv,
  ...webhooksEnv,
  ...mediaEnv,
  ...dashboardEnv,
  ...rendersEnv,
  ...analyticsEnv,
  ...liveEnv,
  ...alignEnv,
  ...jobsEnv,
});

export type Env = z.input<typeof schema>;

export interface Config extends CoreConfig, ProtectionConfig, HotConfig, WebhooksConfig {
  temporal: TemporalConfig;
  storage: StorageConfig;
  upload: UploadConfig;
  /** Key material for lib/secrets.ts (SECRETS_KEY, else UPLOAD_SIGNING_SECRET). */
  secretsKey: Uint8Array;
  media: MediaConfig;
  dashboard: DashboardConfig;
  /** On-demand images (issue 22): the render queue, budgets and the derived-file cap. */
  renders: RenderLimits;
  analytics: AnalyticsConfig;
  live: LiveConfig;
  /** Captions by forced alignment (issue 37). */
  align: AlignConfig;
  /** SPEC §25: on-request jobs in flight per video and per workspace. */
  jobs: JobBounds;
}

/** Reads and validates the environment once. Tests pass their own env. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const isProd = e.NODE_ENV === 'production';
  const uploads = uploadConfig(e, isProd);
  const protection = protectionConfig(e, isProd);
  const media = mediaConfig(e, e.NODE_ENV);
  const core = coreConfig(e);
  return deepFreeze({
    ...core,
    temporal: temporalConfig(e),
    storage: storageConfig(e, core.dataDir),
    ...uploads,
    ...protection,
    ...hotConfig(e),
    ...webhooksConfig(e),
    media,
    dashboard: dashboardConfig(e),
    renders: rendersConfig(e),
    analytics: analyticsConfig(e),
    live: liveConfig(e, core.publicBaseUrl, e.UPLOAD_SIGNING_SECRET),
    align: alignConfig(e),
    jobs: jobsConfig(e),
  });
}
