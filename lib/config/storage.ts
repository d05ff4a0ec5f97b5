// Object storage: the local driver's directory or an S3 bucket (and its public endpoint).
import path from 'node:path';
import { z } from 'zod';
import { bool, type EnvOf } from './env';

/** The S3 client's bounds unless configured (S3_CONNECT_TIMEOUT_MS, S3_IDLE_TIMEOUT_MS), in ms. */
export const S3_BOUNDS_DEFAULT = { connectMs: 5_000, idleMs: 60_000 } as const;

export const storageEnv = {
  STORAGE_DRIVER: z.enum(['local', 's3']).default('local'),
  STORAGE_LOCAL_DIR: z.string().optional(),
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().default('vidhost'),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool.default(true),
  S3_PUBLIC_ENDPOINT: z.string().url().optional(),
  // A storage server that accepts and then says nothing must not hold a request forever.
  S3_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(S3_BOUNDS_DEFAULT.connectMs),
  S3_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).default(S3_BOUNDS_DEFAULT.idleMs),
};

export interface StorageConfig {
  driver: 'local' | 's3';
  localDir: string;
  s3: {
    endpoint?: string;
    publicEndpoint?: string; // contract room
    region: string;
    bucket: string;
    accessKeyId?: string;
    secretAccessKey?: string;
    forcePathStyle: boolean;
    /** Connecting to the endpoint, in ms. */
    connectTimeoutMs?: number;
    /** A request's socket silent this long (nothing sent or received) fails it: a stalled server or body. */
    idleTimeoutMs?: number;
  };
}

export function storageConfig(e: EnvOf<typeof storageEnv>, dataDir: string): StorageConfig {
  return {
    driver: e.STORAGE_DRIVER,
    localDir: path.resolve(e.STORAGE_LOCAL_DIR ?? path.join(dataDir, 'storage')),
    s3: {
      endpoint: e.S3_ENDPOINT,
      publicEndpoint: e.S3_PUBLIC_ENDPOINT, // contract room
      region: e.S3_REGION,
      bucket: e.S3_BUCKET,
      accessKeyId: e.S3_ACCESS_KEY_ID,
      secretAccessKey: e.S3_SECRET_ACCESS_KEY,
      forcePathStyle: e.S3_FORCE_PATH_STYLE,
      connectTimeoutMs: e.S3_CONNECT_TIMEOUT_MS,
      idleTimeoutMs: e.S3_IDLE_TIMEOUT_MS,
    },
  };
}
