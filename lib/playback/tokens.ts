import { SignJWT, decodeProtectedHeader, jwtVerify } from 'jose';
import type { Config } from '../config';

type PlaybackConfig = Config['playback'];

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What a verified token grants: playback of one video until `expiresAt`. */
export interface PlaybackGrant {
  videoUuid: string;
  expiresAt: Date;
}

/** A JWT (HS256) for one video, signed with the configured signing key; `kid` names it. */
export async function signPlaybackToken(
  playback: PlaybackConfig,
  videoUuid: string,
  ttlSeconds: number,
  nowMs = Date.now(),
): Promise<{ token: string; expiresAt: Date }> {
  const key = playback.keys.find((k) => k.kid === playback.signingKid);
  if (!key) throw new Error(`playback signing key ${playback.signingKid} is not configured`);
  const iat = Math.floor(nowMs / 1000);
  const exp = iat + ttlSeconds;
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', kid: key.kid })
    .setSubject(videoUuid)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key.secret);
  return { token, expiresAt: new Date(exp * 1000) };
}

/**
 * Any configured key verifies, chosen by the token's `kid`, so a signing key can be rotated
 * out while the tokens it signed are still alive. Unknown kid, bad signature, expired or
 * malformed → null; the caller answers 403 without saying which.
 */
export async function verifyPlaybackToken(playback: PlaybackConfig, token: string): Promise<PlaybackGrant | null> {
  try {
    const { kid, alg } = decodeProtectedHeader(token);
    const key = alg === 'HS256' ? playback.keys.find((k) => k.kid === kid) : undefined;
    if (!key) return null;
    const { payload } = await jwtVerify(token, key.secret, { algorithms: ['HS256'], requiredClaims: ['sub', 'exp'] });
    if (typeof payload.sub !== 'string' || !UUID_RE.test(payload.sub)) return null;
    return { videoUuid: payload.sub, expiresAt: new Date(payload.exp! * 1000) };
  } catch {
    return null;
  }
}

/** Tokens are compact JWTs: three base64url parts. Anything else in a CDN path is not one. */
export function looksLikeToken(text: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(text);
}
