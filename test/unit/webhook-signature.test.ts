import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { newWebhookSecret, secretBytes, signWebhook, webhookHeaders } from '../../lib/webhooks/signature';

describe('webhooks/signature', () => {
  // The example in the Standard Webhooks specification (and Svix's docs).
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
  const timestamp = 1614265330;
  const body = '{"test": 2432232314}';

  it('signs the published Standard Webhooks example', () => {
    assert.equal(signWebhook(secret, id, timestamp, body), 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('agrees with the scheme computed by hand: HMAC-SHA256 keyed by the base64-decoded secret', () => {
    const key = Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64');
    assert.equal(key.length, 24);
    const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
    assert.equal(signWebhook(secret, id, timestamp, body), `v1,${mac}`);
    // Keyed by the decoded bytes, not by the text of the secret.
    const wrong = createHmac('sha256', secret).update(`${id}.${timestamp}.${body}`).digest('base64');
    assert.notEqual(signWebhook(secret, id, timestamp, body), `v1,${wrong}`);
  });

  it('changes with each signed part', () => {
    const base = signWebhook(secret, id, timestamp, body);
    assert.notEqual(signWebhook(secret, 'msg_other', timestamp, body), base);
    assert.notEqual(signWebhook(secret, id, timestamp + 1, body), base);
    assert.notEqual(signWebhook(secret, id, timestamp, '{"test":2432232314}'), base);
  });

  it('makes whsec_ secrets of 32 random bytes', () => {
    const a = newWebhookSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]+={0,2}$/);
    assert.equal(secretBytes(a).length, 32);
    assert.notEqual(newWebhookSecret(), a);
  });

  it('builds the delivery headers', () => {
    assert.deepEqual(webhookHeaders(secret, id, timestamp, body), {
      'content-type': 'application/json',
      'user-agent': 'vidhost-webhooks/1.0',
      'webhook-id': id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });
});
