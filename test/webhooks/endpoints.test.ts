import assert from 'node:assert/strict';
import { openWebhookSecret } from '../../lib/webhooks/secrets';
import { startStack, type Stack } from '../support/stack';

const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

describe('webhooks: endpoint management', function () {
  let s: Stack;
  before(async function () {
    this.timeout(120_000);
    s = await startStack({ workers: [] });
  });

  it('creates an endpoint and shows its secret once', async () => {
    const r = await s.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['video.ready', 'video.failed'], description: 'ops' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.match(r.body.id, /^whk_[0-9a-f]{32}$/);
    assert.match(r.body.secret, SECRET);
    assert.ok(Buffer.from(r.body.secret.slice(6), 'base64').length >= 24);
    assert.deepEqual(r.body.events, ['video.ready', 'video.failed']);
    assert.equal(r.body.description, 'ops');
    assert.equal(r.body.enabled, true);

    const one = await s.get(`/v1/webhooks/${r.body.id}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.secret, undefined);
    assert.equal(one.body.url, 'http://127.0.0.1:9/hook');
    const list = await s.get('/webhooks');
    assert.equal(list.status, 200);
    assert.ok(list.body.data.some((e: { id: string }) => e.id === r.body.id));
    assert.ok(list.body.data.every((e: Record<string, unknown>) => !('secret' in e)));
  });

  it('stores no filter as null (every event) and de-duplicates a filter', async () => {
    const all = await s.post('/webhooks', { url: 'http://127.0.0.1:9/all' });
    assert.equal(all.status, 201);
    assert.equal(all.body.events, null);
    assert.equal(all.body.description, '');
    const dup = await s.post('/webhooks', { url: 'http://127.0.0.1:9/dup', events: ['video.deleted', 'video.uploaded', 'video.deleted'] });
    assert.deepEqual(dup.body.events, ['video.uploaded', 'video.deleted']);
  });

  it('400 for an unknown event, an empty filter, a missing url, or an unknown field', async () => {
    for (const body of [
      { url: 'http://127.0.0.1:9/x', events: ['video.exploded'] },
      { url: 'http://127.0.0.1:9/x', events: [] },
      { events: ['video.ready'] },
      { url: 'http://127.0.0.1:9/x', secret: 'whsec_mine' },
    ]) {
      const r = await s.post('/webhooks', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'invalid_parameters');
    }
  });

  it('refuses private, link-local and metadata addresses with url_not_allowed', async () => {
    for (const url of ['http://10.0.0.1/x', 'http://169.254.169.254/', 'http://192.168.1.10/hook', 'http://[::ffff:10.0.0.1]/', 'ftp://example.com/x', 'not a url']) {
      const r = await s.post('/webhooks', { url });
      assert.equal(r.status, 400, url);
      assert.equal(r.body.error.code, 'url_not_allowed', url);
    }
  });

  it('updates url, events, description and enabled; rotates the secret on request', async () => {
    const created = await s.post('/webhooks', { url: 'http://127.0.0.1:9/a' });
    const id = created.body.id;
    const p = await s.patch(`/webhooks/${id}`, { url: 'http://127.0.0.1:9/b', events: ['video.failed'], description: 'b', enabled: false });
    assert.equal(p.status, 200, JSON.stringify(p.body));
    assert.equal(p.body.url, 'http://127.0.0.1:9/b');
    assert.deepEqual(p.body.events, ['video.failed']);
    assert.equal(p.body.enabled, false);
    assert.equal(p.body.disabled_reason, 'manual');
    assert.equal(p.body.secret, undefined);

    const back = await s.patch(`/webhooks/${id}`, { enabled: true, events: null });
    assert.equal(back.body.enabled, true);
    assert.equal(back.body.disabled_reason, null);
    assert.equal(back.body.events, null);

    const rotated = await s.patch(`/webhooks/${id}`, { rotate_secret: true });
    assert.equal(rotated.status, 200);
    assert.match(rotated.body.secret, SECRET);
    assert.notEqual(rotated.body.secret, created.body.secret);
    const row = await s.db('webhook_endpoints').where({ id }).first('secret');
    assert.equal(openWebhookSecret(s.config, row.secret), rotated.body.secret);
    assert.ok(!row.secret.includes(rotated.body.secret), 'stored sealed, not in clear');

    const typo = await s.patch(`/webhooks/${id}`, { enable: false });
    assert.equal(typo.status, 400);
    assert.equal(typo.body.error.details[0].field, '(body)');

    const bad = await s.patch(`/webhooks/${id}`, { url: 'http://169.254.169.254/latest/meta-data' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'url_not_allowed');
  });

  it('deletes an endpoint: 204, then 404', async () => {
    const { body } = await s.post('/webhooks', { url: 'http://127.0.0.1:9/gone' });
    assert.equal((await s.del(`/webhooks/${body.id}`)).status, 204);
    assert.equal((await s.get(`/webhooks/${body.id}`)).status, 404);
    assert.equal((await s.get(`/webhooks/${body.id}/deliveries`)).status, 404);
    assert.equal((await s.del(`/webhooks/${body.id}`)).status, 404);
    const list = await s.get('/webhooks');
    assert.ok(!list.body.data.some((e: { id: string }) => e.id === body.id));
  });

  it('read keys may list and read, never write; secrets stay hidden', async () => {
    const { body } = await s.post('/webhooks', { url: 'http://127.0.0.1:9/read' });
    const list = await s.get('/webhooks', s.ws.readKey);
    assert.equal(list.status, 200);
    assert.ok(list.body.data.every((e: Record<string, unknown>) => !('secret' in e)));
    assert.equal((await s.get(`/webhooks/${body.id}`, s.ws.readKey)).status, 200);
    for (const r of [
      await s.post('/webhooks', { url: 'http://127.0.0.1:9/x' }, s.ws.readKey),
      await s.patch(`/webhooks/${body.id}`, { rotate_secret: true }, s.ws.readKey),
      await s.del(`/webhooks/${body.id}`, s.ws.readKey),
    ]) {
      assert.equal(r.status, 403);
      assert.equal(r.body.error.code, 'insufficient_scope');
    }
  });

  it("404 for malformed ids and for another workspace's endpoints and deliveries", async () => {
    const { body } = await s.post('/webhooks', { url: 'http://127.0.0.1:9/mine' });
    const other = await s.newWorkspace();
    assert.equal((await s.get(`/webhooks/${body.id}`, other.fullKey)).status, 404);
    assert.equal((await s.patch(`/webhooks/${body.id}`, { enabled: false }, other.fullKey)).status, 404);
    assert.equal((await s.del(`/webhooks/${body.id}`, other.fullKey)).status, 404);
    assert.equal((await s.get(`/webhooks/${body.id}/deliveries`, other.fullKey)).status, 404);
    const theirs = await s.get('/webhooks', other.fullKey);
    assert.deepEqual(theirs.body.data, []);
    for (const id of ['nope', 'whk_123', 'dlv_' + body.id.slice(4), 'whk_' + 'g'.repeat(32)]) {
      const r = await s.get(`/webhooks/${id}`);
      assert.equal(r.status, 404, id);
      assert.equal(r.body.error.code, 'not_found');
    }
    const dl = await s.post(`/webhooks/${body.id}/deliveries/nope/retry`);
    assert.equal(dl.status, 404);
    const missing = await s.post(`/webhooks/${body.id}/deliveries/dlv_${'0'.repeat(32)}/retry`);
    assert.equal(missing.status, 404);
  });

  it('an endpoint with no deliveries lists none; a bad cursor is a 400', async () => {
    const { body } = await s.post('/webhooks', { url: 'http://127.0.0.1:9/empty' });
    const r = await s.get(`/v1/webhooks/${body.id}/deliveries?limit=5`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { data: [], has_more: false, next_cursor: null });
    assert.equal((await s.get(`/webhooks/${body.id}/deliveries?cursor=zzz`)).status, 400);
    assert.equal((await s.get(`/webhooks/${body.id}/deliveries?limit=0`)).status, 400);
  });
});

describe('webhooks: loopback URLs outside tests', function () {
  it('refuses 127.0.0.1 and localhost when ALLOW_LOOPBACK_URLS=false', async function () {
    this.timeout(120_000);
    const s = await startStack({ env: { ALLOW_LOOPBACK_URLS: 'false' }, workers: [] });
    for (const url of ['http://127.0.0.1/x', 'http://127.0.0.1:8080/hook', 'http://localhost/x', 'http://[::1]/x']) {
      const r = await s.post('/webhooks', { url });
      assert.equal(r.status, 400, url);
      assert.equal(r.body.error.code, 'url_not_allowed', url);
    }
  });
});
