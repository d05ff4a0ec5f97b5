import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { openWebhookSecret } from '../../lib/webhooks/secrets';
import { startStack, type Stack } from '../support/stack';

const run = promisify(execFile);

// Issue 22 item 6: no API key or webhook secret is stored in clear anywhere in the database.
describe('security: secrets at rest', function () {
  this.timeout(120_000);
  let s: Stack;
  before(async () => {
    s = await startStack({ workers: [] });
  });

  it('a replayed key or webhook creation answers the secret redacted, and a pg_dump holds no secret', async () => {
    const key = await s.post('/v1/api-keys', { access: 'read', name: 'idempotent' }).set('Idempotency-Key', 'sec-key-1').expect(201);
    assert.match(key.body.secret, /^vhk_/);
    const hook = await s.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook' }).set('Idempotency-Key', 'sec-hook-1').expect(201);
    assert.match(hook.body.secret, /^whsec_/);
    const rotated = await s.patch(`/v1/webhooks/${hook.body.id}`, { rotate_secret: true }).expect(200);

    const again = await s.post('/v1/api-keys', { access: 'read', name: 'idempotent' }).set('Idempotency-Key', 'sec-key-1').expect(201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.equal(again.headers['idempotent-redacted'], 'secret');
    assert.equal(again.body.id, key.body.id);
    assert.equal(again.body.secret, '[redacted]');
    const hookAgain = await s.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook' }).set('Idempotency-Key', 'sec-hook-1').expect(201);
    assert.equal(hookAgain.body.id, hook.body.id);
    assert.equal(hookAgain.body.secret, '[redacted]');
    // The key still works, and the endpoint still signs with its (sealed) secret.
    assert.equal((await s.get('/v1/videos', key.body.secret)).status, 200);
    const stored = await s.db('webhook_endpoints').where({ id: hook.body.id }).first('secret');
    assert.equal(openWebhookSecret(s.config, stored.secret), rotated.body.secret);

    const { stdout: dump } = await run('pg_dump', ['--data-only', '--no-owner', s.config.databaseUrl], { maxBuffer: 512 * 1024 * 1024 });
    assert.ok(dump.includes(hook.body.id), 'the dump has the endpoint');
    for (const secret of [key.body.secret, hook.body.secret, rotated.body.secret]) {
      assert.ok(!dump.includes(secret), `${secret.slice(0, 8)}… is in the dump`);
      // Nor in the forms a secret travels in: JSON-escaped, or the key bytes after whsec_.
      assert.ok(!dump.includes(JSON.stringify(secret).slice(1, -1)));
      if (secret.startsWith('whsec_')) assert.ok(!dump.includes(secret.slice(6)));
    }
    assert.doesNotMatch(dump, /vhk_[A-Za-z0-9_-]{32}/, 'some API key secret is in the dump');
    assert.doesNotMatch(dump, /whsec_[A-Za-z0-9+/]{43}=/, 'some webhook secret is in the dump');
  });
});
