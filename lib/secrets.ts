import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

// Secrets the service must be able to read back (webhook signing secrets: it signs with them) are
// stored sealed, never in clear: AES-256-GCM under a key derived (HKDF-SHA256) from SECRETS_KEY,
// or from UPLOAD_SIGNING_SECRET when that is not set (docs/security.md, "Secrets at rest").
// Secrets it only has to recognise (API keys, session tokens) are stored as hashes instead.

const PREFIX = 'sealed:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type SealingKey = Buffer;

export function sealingKey(material: Uint8Array, purpose: string): SealingKey {
  return Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), `vidhost ${purpose} v1`, 32));
}

export function seal(key: SealingKey, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

export const isSealed = (stored: string) => stored.startsWith(PREFIX);

/** The plaintext of a sealed value; a value stored before sealing existed is returned as it is. */
export function unseal(key: SealingKey, stored: string): string {
  if (!isSealed(stored)) return stored;
  const raw = Buffer.from(stored.slice(PREFIX.length), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}
