import assert from 'node:assert/strict';
import { isStatus, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { type Receiver, startReceiver, waitFor } from './receiver';

describe('webhooks: a receiver that never answers', function () {
  this.timeout(120_000);
  let s: Stack;
  let rx: Receiver;

  before(async () => {
    // A long timeout, so a pipeline that waited for its webhooks would visibly stall.
    s = await startStack({ env: { WEBHOOK_TIMEOUT_MS: '60000' } });
    rx = await startReceiver(() => 'hang');
  });
  // Before the stack's workers stop: dropping the hung connections ends the in-flight attempts.
  after(() => rx?.close());

  it('does not delay the video: it reaches ready while its only receiver hangs', async () => {
    const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
    const ep = await s.post('/v1/webhooks', { url: rx.url });
    assert.equal(ep.status, 201);
    const started = Date.now();
    const video = await uploadFormA(s, clip);
    await waitFor('video.uploaded to reach the receiver', () => rx.forVideo(video.id).length > 0);
    await waitForVideo(s, video.id, isStatus('ready'), 30_000);
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 30_000, `ready after ${elapsed} ms`);

    // The first event's request is still open, unanswered: the video did not wait for it.
    const list = await s.get(`/v1/webhooks/${ep.body.id}/deliveries`);
    const uploaded = list.body.data.find((d: { event_type: string }) => d.event_type === 'video.uploaded');
    assert.equal(uploaded.status, 'pending');
    assert.equal(uploaded.attempts, 0);
    assert.ok(elapsed < s.config.webhooks.timeoutMs);
  });
});
