// Playback protection: signing keys for playback tokens, master keys for encrypted HLS (SPEC §20).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { MasterKey, MasterKeys } from '../protection/keys';
import { DEV_SECRET, type EnvOf } from './env';

export const protectionEnv = {
  PLAYBACK_SIGNING_KEYS: z.string().optional(),
  PLAYBACK_SIGNING_KID: z.string().optional(),
  // SPEC §20: master keys wrapping per-video AES-128 keys, "kid:<base64 of 32 bytes>[,kid:…]" (docs/protection.md)
  PLAYBACK_KEY_MASTERS: z.string().optional(),
  PLAYBACK_KEY_MASTER_KID: z.string().optional(),
};

export interface PlaybackKey {
  kid: string;
  secret: Uint8Array;
}

export interface ProtectionConfig {
  playback: { keys: PlaybackKey[]; signingKid: string };
  /** Master keys for encrypted HLS (SPEC §20); empty in production when not configured: `aes-128` is then refused. */
  protection: MasterKeys;
}

function parsePlaybackKeys(text: string | undefined, isProd: boolean): PlaybackKey[] {
  if (!text) {
    if (isProd) throw new Error('PLAYBACK_SIGNING_KEYS is required in production');
    return [{ kid: 'dev', secret: new TextEncoder().encode(DEV_SECRET) }];
  }
  return text.split(',').map((pair) => {
    const i = pair.indexOf(':');
    if (i <= 0) throw new Error('PLAYBACK_SIGNING_KEYS must be "kid:secret[,kid:secret]"');
    const secret = pair.slice(i + 1).trim();
    if (secret.length < 16) throw new Error(`playback key ${pair.slice(0, i)} is shorter than 16 chars`);
    return { kid: pair.slice(0, i).trim(), secret: new TextEncoder().encode(secret) };
  });
}

/** Development only: a fixed master derived from the dev secret, so a fresh checkout encrypts without setup. */
const DEV_MASTER: MasterKey = { kid: 'dev', key: createHash('sha256').update(`master:${DEV_SECRET}`).digest() };

function parseMasterKeys(text: string | undefined, kid: string | undefined, isProd: boolean): MasterKeys {
  if (!text) {
    if (kid) throw new Error('PLAYBACK_KEY_MASTER_KID is set without PLAYBACK_KEY_MASTERS');
    return isProd ? { keys: [], currentKid: '' } : { keys: [DEV_MASTER], currentKid: DEV_MASTER.kid };
  }
  const keys = text.split(',').map((pair) => {
    const i = pair.indexOf(':');
    if (i <= 0) throw new Error('PLAYBACK_KEY_MASTERS must be "kid:base64[,kid:base64]"');
    const key = Buffer.from(pair.slice(i + 1).trim(), 'base64');
    if (key.length !== 32) throw new Error(`master key ${pair.slice(0, i)} must be 32 bytes (base64)`);
    return { kid: pair.slice(0, i).trim(), key };
  });
  const currentKid = kid ?? keys[0].kid;
  if (!keys.some((k) => k.kid === currentKid)) throw new Error(`PLAYBACK_KEY_MASTER_KID ${currentKid} is not in PLAYBACK_KEY_MASTERS`);
  return { keys, currentKid };
}

export function protectionConfig(e: EnvOf<typeof protectionEnv>, isProd: boolean): ProtectionConfig {
  const keys = parsePlaybackKeys(e.PLAYBACK_SIGNING_KEYS, isProd);
  const signingKid = e.PLAYBACK_SIGNING_KID ?? keys[0].kid;
  if (!keys.some((k) => k.kid === signingKid)) throw new Error(`PLAYBACK_SIGNING_KID ${signingKid} is not in PLAYBACK_SIGNING_KEYS`);
  return { playback: { keys, signingKid }, protection: parseMasterKeys(e.PLAYBACK_KEY_MASTERS, e.PLAYBACK_KEY_MASTER_KID, isProd) };
}
