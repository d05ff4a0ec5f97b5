import assert from 'node:assert/strict';
import { parseVideoId } from '../../lib/ids';
import { patchIds } from '../replay/markers';
import { uploadFormA } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { type Receiver, startReceiver, verifyStandardWebhook, waitFor } from './receiver';

/**
 * video.uploaded is the client's first news of its upload: it must not wait for a free encode slot.
 * The upload's promotion to the original (the step before the event) ran on the transcode queue,
 * so with every slot busy encoding other videos the event waited for one of them to finish (the
 * webhook delivery tests had to delete their videos to keep later events on time). Here no
 * transcode worker runs at all, as when every slot of every transcode worker is taken: the
 * orchestration worker alone must store the upload and announce it.
 */
describe('webhooks: video.uploaded does not wait behind encodes', function () {
  this.timeout(120_000);
  let s: Stack;
  let rx: Receiver;
  let clip: string;
  before(async () => {
    [s, rx, clip] = await Promise.all([startStack({ workers: ['workflow'] }), startReceiver(), makeClip({ width: 320, height: 180, seconds: 1 })]);
  });
  after(async () => {
    await rx?.close();
  });

  it('is delivered by the orchestration worker alone, with no transcode slot free, and the video reads processing', async () => {
    const ep = await s.post('/v1/webhooks', { url: rx.url, events: ['video.uploaded'] });
    assert.equal(ep.status, 201, JSON.stringify(ep.body));
    const v = await uploadFormA(s, clip);
    const got = await waitFor('video.uploaded', () => rx.forVideo(v.id).find((r) => r.json?.type === 'video.uploaded'), 30_000);
    assert.ok(verifyStandardWebhook(ep.body.secret, got.headers, got.body), 'signed per Standard Webhooks');
    const read = await s.get(`/v1/videos/${v.id}`);
    assert.equal(read.status, 200);
    assert.equal(read.body.status, 'processing', 'no transcode worker: it stays processing');
    // The workflow took the new branch (a recorded marker), so older histories keep theirs.
    const uuid = parseVideoId(v.id);
    const history = await s.temporal.workflow.getHandle(`video-${uuid}`).fetchHistory();
    assert.ok(patchIds(history).includes('promote-on-orchestrator'), `markers: ${patchIds(history)}`);
  });
});
