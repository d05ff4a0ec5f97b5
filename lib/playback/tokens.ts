import { SignJWT, decodeProtectedHeader, jwtVerify } from 'jose';
import type { Config } from '../config';

type PlaybackConfig = Config['playback'];

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What a verified token grants: playback of one video until `expiresAt`, within its claims (SPEC §20). */
export interface PlaybackGrant {
  videoUuid: string;
  expiresAt: Date;
  /** An address or CIDR the viewer must come from. */
  ip?: string;
  /** The short side of the largest rung the token may play (`720p` → 720). */
  maxResolution?: number;
  /** MP4/M4A downloads of a protected video. */
  download?: boolean;
  /** A playback restriction (`pr_…`) that replaces the video's own for this token. */
  restrictionId?: string;
}

/** The optional claims minted by GET /playback/{id} (SPEC §20). */
export interface PlaybackClaims {
  ip?: string;
  max_resolution?: string;
  download?: boolean;
  playback_restriction_id?: string;
}

/** A JWT (HS256) for one video, signed with the configured signing key; `kid` names it. */
export async function signPlaybackToken(
  playback: PlaybackConfig,
  videoUuid: string,
  ttlSeconds: number,
  nowMs = Date.now(),
  claims: PlaybackClaims = {},
): Promise<{ token: string; expiresAt: Date }> {
  const key = playback.keys.find((k) => k.kid === playback.signingKid);
  if (!key) throw new Error(`playback signing key ${playback.signingKid} is not configured`);
  const iat = Math.floor(nowMs / 1000);
  const exp = iat + ttlSeconds;
  const extra = Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== undefined && v !== false));
  const token = await new SignJWT(extra)
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
    const grant: PlaybackGrant = { videoUuid: payload.sub, expiresAt: new Date(payload.exp! * 1000) };
    // Claims this code does not understand in the expected type refuse the token: never widen.
    if (payload.ip !== undefined) {
      if (typeof payload.ip !== 'string') return null;
      grant.ip = payload.ip;
    }
    if (payload.max_resolution !== undefined) {
      const side = typeof payload.max_resolution === 'string' ? /^([0-9]{3,4})p$/.exec(payload.max_resolution) : null;
      if (!side) return null;
      grant.maxResolution = Number(side[1]);
    }
    if (payload.download !== undefined) {
      if (typeof payload.download !== 'boolean') return null;
      grant.download = payload.download;
    }
    if (payload.playback_restriction_id !== undefined) {
      if (typeof payload.playback_restriction_id !== 'string') return null;
      grant.restrictionId = payload.playback_restriction_id;
    }
    return grant;
  } catch {
    return null;
  }
}

/** Tokens are compact JWTs: three base64url parts. Anything else in a CDN path is not one. */
export function looksLikeToken(text: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(text);
}
