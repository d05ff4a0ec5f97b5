import assert from 'node:assert/strict';
import { SignJWT, type JWTPayload } from 'jose';
import type request from 'supertest';
import { loadPlaybackVideo } from '../../lib/playback/access';
import { allRenditionsReady, uploadFormA, waitForVideo } from '../support/flow';
import type { Stack } from '../support/stack';

/** A video that has finished its whole ladder; `visibility` is set at upload init. */
export async function readyVideo(stack: Stack, clip: string, visibility: 'public' | 'unlisted' | 'private' = 'unlisted') {
  const up = await uploadFormA(stack, clip, { extra: { visibility, title: `${visibility} clip` } });
  const video = await waitForVideo(stack, up.id, allRenditionsReady);
  assert.equal(video.visibility, visibility);
  // Reads may answer from the workflow's live state a moment before the row is written; the
  // CDN and the player read the row.
  await waitUntil(async () => {
    const row = await loadPlaybackVideo(stack.db, video.uuid);
    return row?.status === 'ready' && !row.growing;
  }, `video ${video.id} ready in the database`);
  return { id: video.id as string, uuid: video.uuid as string, rung: video.renditions[0].name as string };
}

/** The secret of `kid` in a stack's PLAYBACK_SIGNING_KEYS ("kid:secret,..."). */
export function secretOf(stack: Stack, kid: string): Uint8Array {
  for (const pair of stack.env.PLAYBACK_SIGNING_KEYS.split(',')) {
    const i = pair.indexOf(':');
    if (pair.slice(0, i) === kid) return new TextEncoder().encode(pair.slice(i + 1));
  }
  throw new Error(`no playback key ${kid} in the stack's env`);
}

/** A playback token made by hand, so tests can forge what the API never would. */
export function signToken(secret: Uint8Array, kid: string, claims: JWTPayload): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid }).sign(secret);
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The relative URIs of a playlist (its non-comment lines). */
export function playlistUris(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

/** A supertest parser that keeps any body as bytes: `.buffer(true).parse(binary)`. */
export function binary(res: request.Response, cb: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}

/** Polls `check` until it holds; fails with `what` after the timeout. */
export async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
