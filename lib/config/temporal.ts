// Temporal: the server, its TLS or API key, the task queues and which roles a worker takes.
import os from 'node:os';
import { z } from 'zod';
import type { EnvOf } from './env';

export const temporalEnv = {
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  // A production Temporal (self-hosted with mTLS, or Temporal Cloud with mTLS or an API key).
  TEMPORAL_TLS: z.enum(['true', 'false']).default('false').transform((v) => v === 'true'),
  TEMPORAL_TLS_CERT_PATH: z.string().optional(),
  TEMPORAL_TLS_KEY_PATH: z.string().optional(),
  TEMPORAL_TLS_CA_PATH: z.string().optional(),
  TEMPORAL_TLS_SERVER_NAME: z.string().optional(),
  TEMPORAL_API_KEY: z.string().optional(),
  TEMPORAL_TASK_QUEUE: z.string().default('video'),
  TEMPORAL_TRANSCODE_QUEUE: z.string().default('transcode'),
  TRANSCODE_CONCURRENCY: z.coerce.number().int().min(1).optional(),
  // SPEC §25 (docs/fairness.md): the transcode workers' critical lane, slots of its own for the
  // short steps to `ready`, so a backlog of encodes never holds a new video back.
  TEMPORAL_CRITICAL_QUEUE: z.string().optional(),
  TRANSCODE_CRITICAL_CONCURRENCY: z.coerce.number().int().min(1).default(2),
  TRANSCODE_HEARTBEAT_TIMEOUT_MS: z.coerce.number().int().min(1000).default(30_000),
  WORKER_ROLES: z
    .string()
    .default('workflow,transcode')
    .transform((s) => s.split(',').map((r) => r.trim()).filter(Boolean))
    .pipe(z.array(z.enum(['workflow', 'transcode', 'live'])).min(1)),
  // A workflow bundle built beforehand (workers/workflow-bundle.ts): a workflow worker loads it
  // instead of running webpack at its start. Missing or not a bundle: bundled at start, with a warning.
  WORKFLOW_BUNDLE_PATH: z.string().optional(),
};

export interface TemporalConfig {
  address: string;
  namespace: string;
  /** Undefined for a plain-text server (the dev server, a cluster inside a private network). */
  tls?: { certPath?: string; keyPath?: string; caPath?: string; serverName?: string };
  apiKey?: string;
  taskQueue: string;
  transcodeQueue: string;
  transcodeConcurrency: number;
  /** The critical lane's task queue (default `<transcodeQueue>-critical`), polled by every transcode worker. */
  criticalQueue: string;
  criticalConcurrency: number;
  heartbeatTimeoutMs: number;
  workerRoles: Array<'workflow' | 'transcode' | 'live'>;
  /** WORKFLOW_BUNDLE_PATH: the prebuilt workflow bundle a workflow worker starts from (unset: it bundles its own). */
  workflowBundlePath?: string;
}

/** mTLS needs a certificate and its key together; an API key implies TLS (Temporal Cloud refuses plain text). */
function temporalTls(e: EnvOf<typeof temporalEnv>): TemporalConfig['tls'] {
  if (!!e.TEMPORAL_TLS_CERT_PATH !== !!e.TEMPORAL_TLS_KEY_PATH) {
    throw new Error('TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH must be set together (mTLS)');
  }
  const wanted = e.TEMPORAL_TLS || !!e.TEMPORAL_TLS_CERT_PATH || !!e.TEMPORAL_API_KEY;
  if (!wanted) return undefined;
  return { certPath: e.TEMPORAL_TLS_CERT_PATH, keyPath: e.TEMPORAL_TLS_KEY_PATH, caPath: e.TEMPORAL_TLS_CA_PATH, serverName: e.TEMPORAL_TLS_SERVER_NAME };
}

export function temporalConfig(e: EnvOf<typeof temporalEnv>): TemporalConfig {
  return {
    address: e.TEMPORAL_ADDRESS,
    namespace: e.TEMPORAL_NAMESPACE,
    tls: temporalTls(e),
    apiKey: e.TEMPORAL_API_KEY,
    taskQueue: e.TEMPORAL_TASK_QUEUE,
    transcodeQueue: e.TEMPORAL_TRANSCODE_QUEUE,
    transcodeConcurrency: e.TRANSCODE_CONCURRENCY ?? Math.max(1, os.availableParallelism()),
    criticalQueue: e.TEMPORAL_CRITICAL_QUEUE || `${e.TEMPORAL_TRANSCODE_QUEUE}-critical`,
    criticalConcurrency: e.TRANSCODE_CRITICAL_CONCURRENCY,
    heartbeatTimeoutMs: e.TRANSCODE_HEARTBEAT_TIMEOUT_MS,
    workerRoles: e.WORKER_ROLES,
    workflowBundlePath: e.WORKFLOW_BUNDLE_PATH || undefined,
  };
}
