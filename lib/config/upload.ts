// Uploads (SPEC §12, §13): URL signing, limits, resumable (tus) uploads; the key that seals secrets.
import { z } from 'zod';
import { DEV_SECRET, type EnvOf } from './env';

export const uploadEnv = {
  UPLOAD_SIGNING_SECRET: z.string().min(16).optional(),
  /** Seals secrets stored for reuse (webhook signing secrets); defaults to UPLOAD_SIGNING_SECRET. */
  SECRETS_KEY: z.string().min(16).optional(),
  UPLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(1).default(3600),
  UPLOAD_GRACE_SECONDS: z.coerce.number().int().min(0).default(900),
  MAX_UPLOAD_BYTES: z.coerce.number().int().min(1).default(5 * 1024 ** 3),
  CONFIRM_WAIT_MS: z.coerce.number().int().min(0).default(20_000),
  // uploads room (issue 10): resumable (tus) uploads
  MAX_RESUMABLE_UPLOAD_BYTES: z.coerce.number().int().min(1).default(50 * 1024 ** 3),
};

export interface UploadConfig {
  signingSecret: Uint8Array;
  urlTtlSeconds: number;
  graceSeconds: number;
  maxBytes: number;
  confirmWaitMs: number;
  /** tus uploads may exceed the single-PUT limit up to this (SPEC §13). */
  maxResumableBytes: number;
}

export function uploadConfig(e: EnvOf<typeof uploadEnv>, isProd: boolean): { upload: UploadConfig; secretsKey: Uint8Array } {
  if (isProd && !e.UPLOAD_SIGNING_SECRET) throw new Error('UPLOAD_SIGNING_SECRET is required in production');
  return {
    upload: {
      signingSecret: new TextEncoder().encode(e.UPLOAD_SIGNING_SECRET ?? DEV_SECRET),
      urlTtlSeconds: e.UPLOAD_URL_TTL_SECONDS,
      graceSeconds: e.UPLOAD_GRACE_SECONDS,
      maxBytes: e.MAX_UPLOAD_BYTES,
      confirmWaitMs: e.CONFIRM_WAIT_MS,
      maxResumableBytes: e.MAX_RESUMABLE_UPLOAD_BYTES,
    },
    secretsKey: new TextEncoder().encode(e.SECRETS_KEY ?? e.UPLOAD_SIGNING_SECRET ?? DEV_SECRET),
  };
}
