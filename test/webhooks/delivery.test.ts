import assert from 'node:assert/strict';
import { isStatus, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { type Receiver, sleep, startReceiver, verifyStandardWebhook, waitFor } from './receiver';

describe('webhooks: delivery', function () {
  this.timeout(120_000);
  let s: Stack;
  let clip: string;
  const receivers: Receiver[] = [];
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };
  /** An endpoint for one test; subscribed to video.uploaded (it comes at once) unless told otherwise; null = all. */
  const endpoint = async (url: string, events: string[] | null = ['video.uploaded']) => {
    const r = await s.post('/v1/webhooks', events ? { url, events } : { url });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body as { id: string; secret: string };
  };
  const deliveriesOf = async (endpointId: string) => {
    const r = await s.get(`/v1/webhooks/${endpointId}/deliveries`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data as Array<Record<string, any>>;
  };

  /**
   * The test's videos, deleted when it ends. Only the first test needs a video processed to the end;
   * the others need its video.uploaded. A video left processing holds a slot of the transcode queue;
   * before `promote-on-orchestrator`, that queue also promoted each upload's original before its
   * video.uploaded, so earlier tests' encodes delayed later tests' events (uploaded-first.test.ts
   * now covers that). Deleting them still keeps the stack's CPU for this file's own videos.
   */
  let videos: string[] = [];
  const upload = async () => {
    const v = await uploadFormA(s, clip);
    videos.push(v.id);
    return v;
  };

  before(async () => {
    [s, clip] = await Promise.all([startStack(), makeClip({ width: 320, height: 180, seconds: 2 })]);
  });
  const dropVideos = async () => {
    for (const id of videos) assert.equal((await s.del(`/v1/videos/${id}`)).status, 204);
    videos = [];
  };
  afterEach(dropVideos);
  after(async () => {
    for (const r of receivers) await r.close();
  });

  // The events filter rides on this test's upload: the one test that takes a video to ready.
  it('delivers video.uploaded and video.ready after a real upload, signed per Standard Webhooks; honours the events filter: an endpoint for video.failed hears nothing of a ready video', async () => {
    const rx = await receiver();
    const ep = await endpoint(rx.url, null);
    const witness = await receiver();
    const failedOnly = await receiver();
    const w = await endpoint(witness.url, ['video.ready']);
    const f = await endpoint(failedOnly.url, ['video.failed']);
    const video = await upload();
    await waitForVideo(s, video.id, isStatus('ready'));
    const ready = await waitFor('video.ready', () => rx.forVideo(video.id).find((r) => r.json.type === 'video.ready'));
    await waitFor('video.ready at the witness', () => witness.forVideo(video.id).length > 0);
    await sleep(500);
    assert.deepEqual(failedOnly.received, []);
    assert.deepEqual(await deliveriesOf(f.id), []);
    assert.ok(witness.forVideo(video.id).every((r) => r.json.type === 'video.ready'));
    await s.del(`/v1/webhooks/${w.id}`);
    await s.del(`/v1/webhooks/${f.id}`);
    const uploaded = rx.forVideo(video.id).find((r) => r.json.type === 'video.uploaded');
    assert.ok(uploaded, 'video.uploaded arrived');

    for (const r of [uploaded, ready]) {
      assert.ok(verifyStandardWebhook(ep.secret, r.headers, r.body), `signature of ${r.json.type}`);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.match(String(r.headers['user-agent']), /^vidhost-webhooks\//);
      assert.equal(r.headers['webhook-id'], r.json.id);
      assert.match(r.json.id, /^evt_[0-9a-f]{32}$/);
      assert.equal(r.json.workspace_id, s.ws.id);
      assert.ok(!Number.isNaN(Date.parse(r.json.created_at)));
      assert.equal(r.json.data.video.id, video.id);
    }
    assert.equal(ready.json.data.video.status, 'ready');
    assert.ok(ready.json.data.video.hls_url);
    assert.notEqual(uploaded.json.id, ready.json.id);
    // Another secret does not verify: the check above is not vacuous.
    assert.ok(!verifyStandardWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, ready.headers, ready.body));

    const list = await deliveriesOf(ep.id);
    const readyDelivery = list.find((d) => d.event_id === ready.json.id);
    assert.ok(readyDelivery);
    assert.equal(readyDelivery.event_type, 'video.ready');
    assert.equal(readyDelivery.status, 'succeeded');
    assert.equal(readyDelivery.attempts, 1);
    assert.equal(readyDelivery.last_status_code, 204);
    assert.ok(readyDelivery.delivered_at);
    assert.match(readyDelivery.id, /^dlv_[0-9a-f]{32}$/);
    // Newest first.
    const created = list.map((d) => Date.parse(d.created_at));
    assert.deepEqual(created, [...created].sort((a, b) => b - a));
    const first = await s.get(`/v1/webhooks/${ep.id}/deliveries?limit=1`);
    assert.equal(first.body.data.length, 1);
    assert.equal(first.body.has_more, true);
    const second = await s.get(`/v1/webhooks/${ep.id}/deliveries?limit=1&cursor=${first.body.next_cursor}`);
    assert.deepEqual([first.body.data[0].id, second.body.data[0].id], list.slice(0, 2).map((d) => d.id));
    await s.del(`/v1/webhooks/${ep.id}`);
  });

  it('retries 500, 500, then 200 with the same webhook-id; the delivery shows 3 attempts, succeeded', async () => {
    const rx = await receiver((_req, seen) => (seen.length <= 2 ? { status: 500, body: 'boom' } : { status: 200, body: 'x'.repeat(5000) }));
    const ep = await endpoint(rx.url);
    const video = await upload();
    await waitFor('three attempts', () => rx.received.length >= 3 && rx.received);
    const [a, b, c] = rx.received;
    assert.equal(a.json.data.video.id, video.id);
    assert.equal(a.headers['webhook-id'], b.headers['webhook-id']);
    assert.equal(b.headers['webhook-id'], c.headers['webhook-id']);
    assert.equal(a.body, c.body, 'the payload is sent exactly as stored');
    for (const r of [a, b, c]) assert.ok(verifyStandardWebhook(ep.secret, r.headers, r.body));
    // The schedule is 200 ms, 400 ms, 800 ms in the test stack.
    assert.ok(b.at - a.at >= 180, `first wait ${b.at - a.at} ms`);
    assert.ok(c.at - b.at >= 380, `second wait ${c.at - b.at} ms`);

    const d = await waitFor('succeeded', async () => (await deliveriesOf(ep.id)).find((x) => x.status === 'succeeded'));
    assert.equal(d.attempts, 3);
    assert.equal(d.last_status_code, 200);
    assert.equal(d.last_error, null);
    assert.equal(d.next_attempt_at, null);
    assert.equal(d.last_response_body.length, 1024, 'the stored response body is truncated to 1 KiB');
    await sleep(1000);
    assert.equal(rx.received.length, 3, 'no attempts after success');
    await s.del(`/v1/webhooks/${ep.id}`);
  });

  it('waits as long as Retry-After says when that is longer than the schedule', async () => {
    const rx = await receiver((_req, seen) => (seen.length === 1 ? { status: 503, headers: { 'Retry-After': '2' } } : { status: 200 }));
    const ep = await endpoint(rx.url);
    await upload();
    await waitFor('a second attempt', () => rx.received.length >= 2, 10_000);
    const gap = rx.received[1].at - rx.received[0].at;
    assert.ok(gap >= 1900, `waited ${gap} ms, Retry-After was 2 s`);
    await s.del(`/v1/webhooks/${ep.id}`);
  });

  it('410 Gone disables the endpoint and stops', async () => {
    const rx = await receiver(() => ({ status: 410 }));
    const ep = await endpoint(rx.url);
    await upload();
    await waitFor('disabled', async () => (await s.get(`/v1/webhooks/${ep.id}`)).body.enabled === false);
    const r = await s.get(`/v1/webhooks/${ep.id}`);
    assert.equal(r.body.disabled_reason, 'gone');
    const [d] = await deliveriesOf(ep.id);
    assert.equal(d.status, 'failed');
    assert.equal(d.attempts, 1);
    assert.equal(d.last_status_code, 410);
    await sleep(1500);
    assert.equal(rx.received.length, 1, 'no retries after 410');
    await s.del(`/v1/webhooks/${ep.id}`);
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const rx = await receiver((req) =>
      req.path === '/elsewhere' ? { status: 200 } : { status: 302, headers: { Location: '/elsewhere' } },
    );
    const ep = await endpoint(rx.url);
    await upload();
    const d = await waitFor('failed', async () => (await deliveriesOf(ep.id)).find((x) => x.status === 'failed'), 15_000);
    assert.equal(d.attempts, 4, 'one attempt and three retries');
    assert.equal(d.last_status_code, 302);
    assert.match(d.last_error, /redirect/);
    assert.ok(rx.received.every((r) => r.path === '/hook'), 'the Location was never requested');
    await s.del(`/v1/webhooks/${ep.id}`);
  });

  it('fails after the schedule, then a manual retry re-runs the delivery', async () => {
    let healthy = false;
    const rx = await receiver(() => (healthy ? { status: 200 } : { status: 500 }));
    const ep = await endpoint(rx.url);
    await upload();
    const failed = await waitFor('failed', async () => (await deliveriesOf(ep.id)).find((x) => x.status === 'failed'), 15_000);
    assert.equal(failed.attempts, 4);
    assert.equal(failed.last_status_code, 500);
    assert.equal(failed.last_error, 'HTTP 500');
    assert.equal(failed.next_attempt_at, null);

    healthy = true;
    const retry = await s.post(`/v1/webhooks/${ep.id}/deliveries/${failed.id}/retry`);
    assert.equal(retry.status, 202, JSON.stringify(retry.body));
    assert.equal(retry.body.status, 'pending');
    const done = await waitFor('succeeded', async () => (await deliveriesOf(ep.id)).find((x) => x.status === 'succeeded'));
    assert.equal(done.id, failed.id);
    assert.equal(done.attempts, 5, 'attempts count every request sent');
    assert.equal(rx.received.length, 5);
    assert.equal(new Set(rx.received.map((r) => r.headers['webhook-id'])).size, 1);

    await s.patch(`/v1/webhooks/${ep.id}`, { enabled: false });
    const refused = await s.post(`/v1/webhooks/${ep.id}/deliveries/${failed.id}/retry`);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'endpoint_disabled');
    await s.del(`/v1/webhooks/${ep.id}`);
  });

  it('a retry of a delivery still being attempted is a 409', async () => {
    const rx = await receiver(() => 'hang');
    const ep = await endpoint(rx.url);
    await upload();
    await waitFor('an attempt', () => rx.received.length >= 1);
    const [d] = await deliveriesOf(ep.id);
    const r = await s.post(`/v1/webhooks/${ep.id}/deliveries/${d.id}/retry`);
    assert.equal(r.status, 409);
    assert.equal(r.body.error.code, 'delivery_in_progress');
    // WEBHOOK_TIMEOUT_MS is 2 s in the test stack: the silent receiver counts as a failed attempt.
    const timedOut = await waitFor('a timed-out attempt', async () => (await deliveriesOf(ep.id)).find((x) => x.attempts >= 1));
    assert.equal(timedOut.status, 'pending');
    assert.equal(timedOut.last_status_code, null);
    assert.match(timedOut.last_error, /no response within 2000 ms/);
    assert.ok(timedOut.next_attempt_at);
    await s.del(`/v1/webhooks/${ep.id}`);
  });

  it('notices at the next attempt an endpoint deleted or disabled outside the API', async () => {
    for (const change of [{ deleted_at: new Date() }, { enabled: false }]) {
      const rx = await receiver(() => ({ status: 500 }));
      const ep = await endpoint(rx.url);
      await upload();
      await waitFor('an attempt', () => rx.received.length >= 1);
      // Straight to the database: the API would also cancel the run; here only the activity can stop it.
      await s.db('webhook_endpoints').where({ id: ep.id }).update(change);
      const seen = rx.received.length;
      const row = await waitFor('cancelled', async () => {
        const r = await s.db('webhook_deliveries').where({ endpoint_id: ep.id }).first();
        return r.status === 'cancelled' && r;
      });
      assert.ok(row.attempts <= seen);
      await sleep(1000);
      assert.ok(rx.received.length <= seen + 1, `at most the attempt already under way (${seen} → ${rx.received.length})`);
      await s.db('webhook_endpoints').where({ id: ep.id }).update({ deleted_at: new Date() });
      await dropVideos();
    }
  });

  it('a deleted endpoint stops receiving, even mid-schedule', async () => {
    const rx = await receiver(() => ({ status: 500 }));
    const ep = await endpoint(rx.url);
    await upload();
    await waitFor('two attempts', () => rx.received.length >= 2);
    assert.equal((await s.del(`/v1/webhooks/${ep.id}`)).status, 204);
    const seen = rx.received.length;
    await sleep(2500);
    assert.equal(rx.received.length, seen, 'no attempts after the delete');
    const rows = await s.db('webhook_deliveries').where({ endpoint_id: ep.id });
    assert.equal(rows.length, 1);
    assert.equal(rows[0].status, 'cancelled');
  });

  it('a disabled endpoint gets no new deliveries', async () => {
    const rx = await receiver();
    const ep = await endpoint(rx.url);
    await s.patch(`/v1/webhooks/${ep.id}`, { enabled: false });
    const witness = await receiver();
    const w = await endpoint(witness.url);
    const video = await upload();
    await waitFor('the witness', () => witness.forVideo(video.id).length > 0);
    await sleep(500);
    assert.equal(rx.forVideo(video.id).length, 0);
    await s.del(`/v1/webhooks/${ep.id}`);
    await s.del(`/v1/webhooks/${w.id}`);
  });
});
