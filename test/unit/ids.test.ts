import assert from 'node:assert/strict';
import { newId, newVideoUuid, parseVideoId, randomToken, videoPublicId } from '../../lib/ids';

// Ids and tokens draw from a pooled CSPRNG buffer (lib/ids.ts): no byte may be handed out twice,
// and video ids must stay UUIDv7s in creation order even many to a millisecond.
describe('ids: pooled randomness', () => {
  it('video ids are valid, unique UUIDv7s in creation order, across pool refills', () => {
    const ids = Array.from({ length: 5000 }, () => newVideoUuid()); // 80 KB: twenty refills
    assert.equal(new Set(ids).size, ids.length);
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `${ids[i]} after ${ids[i - 1]}`);
    for (const id of ids.slice(0, 50)) {
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(parseVideoId(videoPublicId(id)), id);
    }
    const ms = parseInt(ids[ids.length - 1].replace(/-/g, '').slice(0, 12), 16);
    assert.ok(Math.abs(ms - Date.now()) < 60_000, 'the time prefix is now');
  });

  it('tokens never repeat a draw and have their full length', () => {
    const tokens = Array.from({ length: 3000 }, () => randomToken(12));
    assert.equal(new Set(tokens).size, tokens.length);
    assert.ok(tokens.every((t) => Buffer.from(t, 'base64url').length === 12));
    assert.equal(Buffer.from(randomToken(5000), 'base64url').length, 5000, 'larger than the pool');
    assert.match(newId('tag'), /^tag_[0-9a-f]{32}$/);
  });
});
