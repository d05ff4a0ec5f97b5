import type { Readable } from 'node:stream';

export interface PresignedUpload {
  url: string;
  method: 'PUT';
  /** Headers the client must send with the PUT (they are covered by the signature). */
  headers: Record<string, string>;
  expiresIn: number;
}

export interface PresignOptions {
  contentType: string;
  contentLength: number;
  expiresIn: number;
  /** The video whose upload this is: the local driver refuses the PUT once that upload is closed. */
  videoId?: string;
}

export interface ObjectInfo {
  size: number;
  contentType?: string;
  /** A strong validator for the object's bytes (quoted), for ETag / If-None-Match. */
  etag?: string;
}

export interface ByteRange {
  start: number;
  end: number; // inclusive
}

export interface ObjectStream extends ObjectInfo {
  body: Readable;
}

/** Object storage as the service needs it; keys are `/`-separated and never start with `/`. */
export interface Storage {
  readonly driver: 'local' | 's3';
  presignPut(key: string, opts: PresignOptions): Promise<PresignedUpload>;
  head(key: string): Promise<ObjectInfo | null>;
  /** null when the object does not exist. */
  get(key: string, range?: ByteRange): Promise<ObjectStream | null>;
  put(key: string, body: Readable | Buffer | string, opts?: { contentType?: string; cacheControl?: string }): Promise<void>;
  putFile(key: string, filePath: string, opts?: { contentType?: string }): Promise<void>;
  /** A body of unknown length, in constant memory (S3: a multipart upload); nothing is stored if it fails. */
  putStream(key: string, body: Readable, opts?: { contentType?: string }): Promise<void>;
  download(key: string, filePath: string): Promise<void>;
  /** Something ffmpeg can read the object from: a local path, or a short-lived presigned GET URL. */
  mediaSource(key: string): Promise<string>;
  list(prefix: string): Promise<string[]>;
  /**
   * Moves an object to another key: the destination appears whole or not at all, then the source
   * goes. Safe to run again after a crash (a missing source with a present destination is done).
   * `onProgress` is called between the steps of a long server-side copy (for heartbeats).
   */
  move(from: string, to: string, opts?: { contentType?: string; onProgress?: () => void }): Promise<void>;
  /**
   * A point-in-time copy of an object under another key (local: a hard link; S3: a server-side
   * copy): later writes to `from` do not reach it. false when `from` does not exist.
   */
  snapshot(from: string, to: string): Promise<boolean>;
  /** Deletes every object under the prefix; returns how many. Idempotent. */
  deletePrefix(prefix: string): Promise<number>;
  /** Throws when the backend is not usable (readiness). */
  check(): Promise<void>;
}

export class StorageError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Rejects keys that could escape the storage root. */
export function assertSafeKey(key: string): void {
  if (!key || key.startsWith('/') || key.includes('\\') || key.split('/').some((p) => p === '..' || p === '.' || p === '') || /[\0-\x1f]/.test(key)) {
    throw new StorageError(400, 'invalid_key', `unsafe storage key: ${JSON.stringify(key)}`);
  }
}
