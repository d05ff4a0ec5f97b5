import assert from 'node:assert/strict';
import request from 'supertest';
import { startStack, type Stack } from '../support/stack';

describe('API keys', function () {
  let s: Stack;
  before(async function () {
    this.timeout(120_000);
    s = await startStack({ workers: [] });
  });

  it('creates a key whose secret is shown once, lists keys without secrets, and the new key works', async () => {
    const r = await s.post('/v1/api-keys', { name: 'ci', access: 'read' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.match(r.body.id, /^key_[0-9a-f]{32}$/);
    assert.match(r.body.secret, /^vhk_/);
    assert.equal(r.body.access, 'read');
    assert.equal(r.body.name, 'ci');
    assert.equal(r.body.prefix, r.body.secret.slice(0, 10));
    const list = await s.get('/v1/api-keys');
    assert.equal(list.status, 200);
    const listed = list.body.data.find((k: { id: string }) => k.id === r.body.id);
    assert.ok(listed);
    assert.equal(listed.secret, undefined);
    assert.ok(!JSON.stringify(list.body).includes(r.body.secret), 'no secret anywhere in the list');
    assert.equal((await s.get('/v1/videos', r.body.secret)).status, 200);
    assert.equal((await s.post('/v1/folders', { name: 'x' }, r.body.secret)).status, 403);
    const row = await s.db('api_keys').where({ id: r.body.id }).first();
    assert.notEqual(row.key_hash, r.body.secret, 'only a hash is stored');
  });

  it('a revoked key gets 401 at once, and disappears from the list', async () => {
    const k = (await s.post('/v1/api-keys', { name: 'temp', access: 'full' })).body;
    assert.equal((await request(s.url).get('/v1/videos').set('X-API-Key', k.secret)).status, 200);
    assert.equal((await s.del(`/v1/api-keys/${k.id}`)).status, 204);
    const after = await request(s.url).get('/v1/videos').set('X-API-Key', k.secret);
    assert.equal(after.status, 401);
    assert.equal(after.body.error.code, 'unauthorized');
    assert.ok(!(await s.get('/v1/api-keys')).body.data.some((x: { id: string }) => x.id === k.id));
    assert.equal((await s.del(`/v1/api-keys/${k.id}`)).status, 404, 'revoking twice');
  });

  it('read keys cannot list, create or revoke keys (403 even on GET)', async () => {
    for (const r of [
      await s.get('/v1/api-keys', s.ws.readKey),
      await s.post('/v1/api-keys', { access: 'read' }, s.ws.readKey),
      await s.del('/v1/api-keys/key_00000000000000000000000000000000', s.ws.readKey),
    ]) {
      assert.equal(r.status, 403);
      assert.equal(r.body.error.code, 'insufficient_scope');
    }
  });

  it('400 for bad bodies; 404 for malformed ids and other workspaces’ keys', async () => {
    for (const body of [{}, { access: 'admin' }, { access: 'read', name: 'x'.repeat(101) }, { access: 'read', scopes: [] }]) {
      assert.equal((await s.post('/v1/api-keys', body)).status, 400, JSON.stringify(body));
    }
    const other = await s.newWorkspace();
    const theirs = (await s.post('/v1/api-keys', { access: 'full' }, other.fullKey)).body;
    assert.equal((await s.del(`/v1/api-keys/${theirs.id}`)).status, 404);
    assert.equal((await s.del('/v1/api-keys/nope')).status, 404);
    assert.equal((await request(s.url).get('/v1/videos').set('X-API-Key', theirs.secret)).status, 200, 'still valid');
  });

  it("refuses to revoke the workspace's last full key (409); a key may revoke itself otherwise", async () => {
    const ws = await s.newWorkspace();
    const keys = (await s.get('/v1/api-keys', ws.fullKey)).body.data as Array<{ id: string; access: string }>;
    const full = keys.filter((k) => k.access === 'full');
    assert.equal(full.length, 1);
    const last = await s.del(`/v1/api-keys/${full[0].id}`, ws.fullKey);
    assert.equal(last.status, 409);
    assert.equal(last.body.error.code, 'last_full_key');
    // Rotation: create a new full key, then the old key revokes itself.
    const fresh = (await s.post('/v1/api-keys', { name: 'rotated', access: 'full' }, ws.fullKey)).body;
    assert.equal((await s.del(`/v1/api-keys/${full[0].id}`, ws.fullKey)).status, 204);
    assert.equal((await s.get('/v1/videos', ws.fullKey)).status, 401);
    // Now the fresh key is the last one; read keys can always go.
    assert.equal((await s.del(`/v1/api-keys/${fresh.id}`, fresh.secret)).status, 409);
    const read = keys.find((k) => k.access === 'read')!;
    assert.equal((await s.del(`/v1/api-keys/${read.id}`, fresh.secret)).status, 204);
  });

  it('two concurrent revocations of the last two full keys leave one', async () => {
    const ws = await s.newWorkspace();
    const second = (await s.post('/v1/api-keys', { access: 'full' }, ws.fullKey)).body;
    const first = (await s.get('/v1/api-keys', ws.fullKey)).body.data.find((k: { id: string; access: string }) => k.access === 'full' && k.id !== second.id);
    const [a, b] = await Promise.all([s.del(`/v1/api-keys/${first.id}`, second.secret), s.del(`/v1/api-keys/${second.id}`, ws.fullKey)]);
    // One wins (204). The other is refused: 409 if it was let in before the winner committed (the
    // last-key check under the workspace's lock), or 401 if the winner had already revoked the key
    // it came with (seen under CI's load). Either way exactly one full key is left.
    const [won, lost] = [a.status, b.status].sort();
    assert.equal(won, 204, `${a.status} ${b.status}`);
    assert.ok(lost === 409 || lost === 401, `${a.status} ${b.status}`);
    const [{ n }] = await s.db('api_keys').where({ workspace_id: ws.id, access: 'full' }).whereNull('revoked_at').count({ n: '*' });
    assert.equal(Number(n), 1);
  });
});
