import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX32_RE = /^[0-9a-f]{32}$/i;

export type Prefix = 'ws' | 'key' | 'fld' | 'tag' | 'whk' | 'evt' | 'dlv' | 'req' | 'usr' | 'pr' | 'ls' | 'wm';

/**
 * Random bytes from the CSPRNG, drawn 4 KB at a time: each draw is a getrandom(2) call, which on
 * this kind of VM costs as much as a small request's own work (init drew three per request). Every
 * byte is handed out once; this is what Node's randomUUID does with its own cache.
 */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;
function randomBytes(n: number): Buffer {
  if (n > pool.length) return randomFillSync(Buffer.alloc(n));
  if (poolAt + n > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const out = Buffer.from(pool.subarray(poolAt, poolAt + n));
  poolAt += n;
  return out;
}

/** A new time-ordered id: `<prefix>_<32 hex of a UUIDv7>`. */
export function newId(prefix: Prefix): string {
  return `${prefix}_${newVideoUuid().replace(/-/g, '')}`;
}

/** uuid's own v7 state, kept here because its default path draws from the CSPRNG per id: ids stay monotonic within a millisecond. */
const v7 = { msecs: -Infinity, seq: 0 };

export function newVideoUuid(): string {
  const random = randomBytes(16);
  const now = Date.now();
  if (now > v7.msecs) {
    v7.msecs = now;
    v7.seq = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9];
  } else {
    v7.seq = (v7.seq + 1) | 0;
    if (v7.seq === 0) v7.msecs++;
  }
  return uuidv7({ random, msecs: v7.msecs, seq: v7.seq });
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
