import { createHash, randomBytes } from 'node:crypto';

/**
 * A stream key: 32 hex characters behind a `lsk` tag, so it is a safe RTMP stream name and an SRT
 * streamid as it is. Only its sha256 is stored; the key is shown on create and on reset.
 */
export function newStreamKey(): string {
  return `lsk${randomBytes(16).toString('hex')}`;
}

export const STREAM_KEY_RE = /^lsk[0-9a-f]{32}$/;

export function hashStreamKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** node-media-server's play signature (`?sign=<exp>-<md5(path-exp-secret)>`): only live workers know the secret. */
export function signMediaPath(streamPath: string, secret: string, ttlSeconds = 3600, nowMs = Date.now()): string {
  const exp = Math.floor(nowMs / 1000) + ttlSeconds;
  const md5 = createHash('md5').update(`${streamPath}-${exp}-${secret}`).digest('hex');
  return `${exp}-${md5}`;
}

/** The path a live worker reads a broadcast from: by stream id, never by key. */
export const internalPath = (liveStreamId: string) => `/internal/${liveStreamId}`;
