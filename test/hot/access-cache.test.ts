import assert from 'node:assert/strict';
import type { AccessCache } from '../../lib/playback/accessCache';
import { until } from '../support/flow';
import { startStack, type Stack } from '../support/stack';

/** The cache's NOTIFY handler, called directly so that a notification lands while a lookup is in flight. */
const notify = (cache: AccessCache, payload: string) => (cache as unknown as { invalidate(p: string): void }).invalidate(payload);

// lib/playback/accessCache.ts: a change notified while a lookup runs drops that lookup's answer
// only when it names the lookup's video or workspace. It used to be any change anywhere (a global
// epoch), so another stack's bandwidth flush or rendition could send the next request through
// the slow path: test/hot/cdn-fast.test.ts's count of lookups failed now and then in the full run.
describe('hot: CDN access decisions and changes notified while they are looked up', function () {
  let s: Stack;
  let cache: AccessCache;
  const ids: string[] = [];
  let uuids: string[] = [];

  before(async function () {
    this.timeout(60_000);
    s = await startStack({ workers: [], env: { CDN_ACCESS_CACHE_MS: '60000' } });
    cache = s.app.hot.access;
    for (let i = 0; i < 6; i++) {
      const r = await s.post('/v1/upload/init', { filename: `a${i}.mp4`, size: 1000, content_type: 'video/mp4', visibility: 'public' }).expect(201);
      ids.push(r.body.video_id);
    }
    uuids = await Promise.all(ids.map(async (id) => (await s.get(`/v1/videos/${id}`).expect(200)).body.uuid as string));
    // Decisions are kept only once the cache's LISTEN is in force.
    await until(async () => (await cache.resolve({ id: ids[5] }), cache.peek({ id: ids[5] }) !== undefined), 10_000, 'the access cache keeps decisions');
  });

  const lookupWhile = async (id: string, payload: string) => {
    const pending = cache.resolve({ id });
    notify(cache, payload);
    assert.equal((await pending).kind, 'ok');
    return cache.peek({ id });
  };

  it('keeps the answer when another video or workspace changed meanwhile', async () => {
    assert.equal((await lookupWhile(ids[0], `video:${uuids[1]}`))?.kind, 'ok', 'another video changed');
    const other = await s.newWorkspace();
    assert.equal((await lookupWhile(ids[1], `ws:${other.id}`))?.kind, 'ok', 'another workspace changed');
  });

  it('drops the answer when its own video or workspace changed meanwhile', async () => {
    assert.equal(await lookupWhile(ids[2], `video:${uuids[2]}`), undefined, 'its video changed');
    assert.equal(await lookupWhile(ids[3], `ws:${s.ws.id}`), undefined, 'its workspace changed');
    // Settled answers go the same way.
    assert.equal((await lookupWhile(ids[4], `video:${uuids[0]}`))?.kind, 'ok');
    notify(cache, `video:${uuids[4]}`);
    assert.equal(cache.peek({ id: ids[4] }), undefined);
  });
});
