import assert from 'node:assert/strict';
import { decodeProtectedHeader } from 'jose';
import request from 'supertest';
import { randomToken } from '../../lib/ids';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { readyVideo } from './helpers';

/**
 * Key rotation across deployments: stacks that share the database and the storage directory
 * stand for the same service restarted with a new PLAYBACK_SIGNING_KEYS.
 */
describe('Playback: signing key rotation', function () {
  const k1 = `k1:${randomToken(24)}`;
  const k2 = `k2:${randomToken(24)}`;
  let before1: Stack;
  let video: Awaited<ReturnType<typeof readyVideo>>;
  let oldToken: string;

  const restart = (keys: string, kid: string) =>
    startStack({
      workers: [],
      env: { PLAYBACK_SIGNING_KEYS: keys, PLAYBACK_SIGNING_KID: kid, STORAGE_LOCAL_DIR: before1.config.storage.localDir },
    });
  const master = (stack: Stack, token: string) => request(stack.url).get(`/cdn/v/${token}/master.m3u8`);

  before(async function () {
    this.timeout(240_000);
    before1 = await startStack({ env: { PLAYBACK_SIGNING_KEYS: k1, PLAYBACK_SIGNING_KID: 'k1' } });
    video = await readyVideo(before1, await makeClip({ width: 320, height: 180, seconds: 4 }), 'private');
    const r = await before1.get(`/v1/playback/${video.id}`);
    assert.equal(r.status, 200);
    oldToken = r.body.token;
    assert.equal(decodeProtectedHeader(oldToken).kid, 'k1');
  });

  it('a token signed with a rotated-out signing key still plays while that key is configured', async function () {
    this.timeout(60_000);
    const during = await restart(`${k1},${k2}`, 'k2');
    try {
      const fresh = await request(during.url).get(`/v1/playback/${video.id}`).set('Authorization', `Bearer ${before1.ws.fullKey}`);
      assert.equal(fresh.status, 200);
      assert.equal(decodeProtectedHeader(fresh.body.token).kid, 'k2', 'new tokens use the new signing key');
      assert.equal((await master(during, oldToken)).status, 200, 'the k1 token still verifies');
      assert.equal((await master(during, fresh.body.token)).status, 200);
    } finally {
      await during.close();
    }
  });

  it('once the old key is removed its tokens are refused; the new key keeps working', async function () {
    this.timeout(60_000);
    const after = await restart(k2, 'k2');
    try {
      const refused = await master(after, oldToken);
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'forbidden');
      const fresh = await request(after.url).get(`/v1/playback/${video.id}`).set('Authorization', `Bearer ${before1.ws.fullKey}`);
      assert.equal((await master(after, fresh.body.token)).status, 200);
    } finally {
      await after.close();
    }
  });
});
