import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX32_RE = /^[0-9a-f]{32}$/i;

export type Prefix = 'ws' | 'key' | 'fld' | 'tag' | 'whk' | 'evt' | 'dlv' | 'req' | 'usr';

/** A new time-ordered id: `<prefix>_<32 hex of a UUIDv7>`. */
export function newId(prefix: Prefix): string {
  return `${prefix}_${uuidv7().replace(/-/g, '')}`;
}

export function newVideoUuid(): string {
  return uuidv7();
}

export function videoPublicId(uuid: string): string {
  return `vid_${uuid.replace(/-/g, '').toLowerCase()}`;
}

function hexToUuid(hex: string): string {
  const h = hex.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Accepts `vid_<hex>` or a UUID; returns the canonical UUID, or null when malformed. */
export function parseVideoId(id: string): string | null {
  if (id.startsWith('vid_')) return HEX32_RE.test(id.slice(4)) ? hexToUuid(id.slice(4)) : null;
  return UUID_RE.test(id) ? id.toLowerCase() : null;
}

/** Accepts `<prefix>_<32 hex>`; returns it unchanged, or null when malformed. */
export function parseId(prefix: Prefix, id: string): string | null {
  return id.startsWith(`${prefix}_`) && HEX32_RE.test(id.slice(prefix.length + 1)) ? id.toLowerCase() : null;
}

export function randomToken(bytes = 24): string {
  return randomBytes(bytes).toString('base64url');
}
