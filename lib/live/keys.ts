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

