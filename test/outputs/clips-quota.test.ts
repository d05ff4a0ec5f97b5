import assert from 'node:assert/strict';
import { limitsOf } from '../../lib/plans';
import { isStatus, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

/** Issue 22 item 7: clips count against the storage quota like uploads. */
describe('Outputs: clips reserve storage (issue 22)', function () {
  this.timeout(180_000);
  let s: Stack;
  let source: Record<string, any>;

  before(async function () {
    this.timeout(240_000);
    s = await startStack();
    const file = await makeClip({ width: 320, height: 180, seconds: 4 });
    const up = await uploadFormA(s, file);
    source = await waitForVideo(s, up.id, isStatus('ready'), 200_000);
  });

  it('5 parallel clips at the limit: one fits, the others are 403 storage_quota_exceeded; the reservation settles to the real size', async () => {
    const quota = limitsOf('free').storageBytes;
    const estimate = Math.ceil(source.size_bytes / 2); // 0–2 s of 4 s
    // The workspace has room for one such clip and a half, not two.
    await s.db('workspaces').where({ id: s.ws.id }).update({ storage_used_bytes: quota - Math.floor(estimate * 1.5) });
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => s.post(`/v1/videos/${source.id}/clips`, { start_time: 0, end_time: 2, title: `c${i}` }).then((r) => r)));
    const accepted = answers.filter((r) => r.status === 202);
    const refused = answers.filter((r) => r.status === 403);
    assert.equal(accepted.length, 1, answers.map((r) => r.status).join(','));
    assert.equal(refused.length, 4);
    for (const r of refused) assert.equal(r.body.error.code, 'storage_quota_exceeded');
    const clip = accepted[0].body;
    assert.equal(clip.size_bytes, estimate, 'the estimate is reserved at creation');
    const ws = async () => Number((await s.db('workspaces').where({ id: s.ws.id }).first('storage_used_bytes')).storage_used_bytes);
    assert.equal(await ws(), quota - Math.floor(estimate * 1.5) + estimate);
    const videos = await s.db('videos').where({ workspace_id: s.ws.id, source_video_id: source.uuid }).count('* as n').first();
    assert.equal(Number(videos!.n), 1, 'refused clips left no video');

    const done = await waitForVideo(s, clip.id, isStatus('ready'), 150_000);
    const real = await s.storage.head(done.storage_key);
    assert.ok(real);
    assert.equal(done.size_bytes, real.size, 'settled to the size of the cut original');
    assert.equal(await ws(), quota - Math.floor(estimate * 1.5) + real.size);
  });
});
