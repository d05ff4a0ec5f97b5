import assert from 'node:assert/strict';
import request from 'supertest';
import { randomToken } from '../../lib/ids';
import { startStack, type Stack } from '../support/stack';
import { account, sessionCookie } from '../dashboard/accounts';

// Issue 22 item 5: owners manage keys, members and webhooks; members manage videos and read keys.
describe('security: roles', function () {
  this.timeout(120_000);
  let s: Stack;

  before(async () => {
    s = await startStack({ workers: [] });
  });

  interface Person {
    id: string;
    send(method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object): request.Test;
  }
  /** A signed-in person of `ws` (a dashboard session: cookie, Origin and CSRF token). */
  const person = async (ws: string, role: 'owner' | 'member'): Promise<Person> => {
    const a = await account(s, `${role}-${randomToken(5).replace(/[^a-z0-9]/gi, 'x').toLowerCase()}@roles.test`, ws, role);
    const res = await request(s.url).post('/dashboard/session').set('Origin', s.url).send({ email: a.email, password: a.password }).expect(200);
    const cookie = sessionCookie(res.headers['set-cookie']);
    const csrf = res.body.csrf_token as string;
    return {
      id: res.body.person.id,
      send: (method, path, body) => {
        const t = request(s.url)[method](path).set('Cookie', cookie).set('Origin', s.url).set('X-CSRF-Token', csrf);
        return body ? t.send(body) : t;
      },
    };
  };
  const keyWorks = (secret: string) => request(s.url).get('/v1/videos').set('Authorization', `Bearer ${secret}`).then((r) => r.status);
  /** Revocation reaches the key cache by NOTIFY: wait for it rather than for the cache's TTL. */
  const until401 = async (secret: string) => {
    for (let i = 0; i < 50; i++) {
      if ((await keyWorks(secret)) === 401) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail('the key still works');
  };

  it('a member cannot make a full-access key, revoke the owner\'s keys or change webhooks; can manage videos and read keys', async () => {
    const ws = await s.newWorkspace();
    const member = await person(ws.id, 'member');
    const full = await member.send('post', '/v1/api-keys', { access: 'full', name: 'escalate' }).expect(403);
    assert.equal(full.body.error.code, 'owner_required');
    const ownerKey = await s.db('api_keys').where({ workspace_id: ws.id, access: 'full' }).first('id');
    assert.equal((await member.send('delete', `/v1/api-keys/${ownerKey.id}`).expect(403)).body.error.code, 'owner_required');
    assert.equal((await member.send('post', '/v1/webhooks', { url: 'http://127.0.0.1:9/hook' }).expect(403)).body.error.code, 'owner_required');
    await member.send('get', '/v1/webhooks').expect(200);
    await member.send('get', '/v1/api-keys').expect(200);

    // Videos and their library are a member's to manage, and read keys of their own.
    await member.send('post', '/v1/folders', { name: 'member folder' }).expect(201);
    const read = await member.send('post', '/v1/api-keys', { access: 'read', name: 'mine' }).expect(201);
    assert.equal(await keyWorks(read.body.secret), 200);
    await member.send('delete', `/v1/api-keys/${read.body.id}`).expect(204);
    assert.equal((await s.db('api_keys').where({ id: read.body.id }).first('created_by')).created_by, member.id);
  });

  it('playback restrictions and the workspace defaults are the owners\' to change; members read them (SPEC §20)', async () => {
    const ws = await s.newWorkspace();
    const member = await person(ws.id, 'member');
    const owner = await person(ws.id, 'owner');
    const body = { referrer: { allowed_domains: ['example.com'] } };
    const pr = (await owner.send('post', '/v1/playback-restrictions', body).expect(201)).body;
    const refused: Array<[string, request.Test]> = [
      ['create', member.send('post', '/v1/playback-restrictions', body)],
      ['change', member.send('patch', `/v1/playback-restrictions/${pr.id}`, { referrer: { allowed_domains: ['*'] } })],
      ['delete', member.send('delete', `/v1/playback-restrictions/${pr.id}`)],
      ['default restriction', member.send('patch', '/v1/playback-defaults', { default_playback_restriction_id: null })],
      ['default encryption', member.send('patch', '/v1/playback-defaults', { default_encryption: 'none' })],
    ];
    for (const [what, t] of refused) {
      const r = await t;
      assert.equal(r.status === 403 && r.body.error.code, 'owner_required', what);
    }
    await member.send('get', '/v1/playback-restrictions').expect(200);
    assert.deepEqual((await member.send('get', `/v1/playback-restrictions/${pr.id}`).expect(200)).body.referrer.allowed_domains, ['example.com']);
    await member.send('get', '/v1/playback-defaults').expect(200);
    // The owner (and a full-access key, which acts as one) still manage them.
    await owner.send('patch', '/v1/playback-defaults', { default_playback_restriction_id: pr.id }).expect(200);
    await owner.send('patch', `/v1/playback-restrictions/${pr.id}`, { referrer: { allow_no_referrer: true } }).expect(200);
    await request(s.url).patch('/v1/playback-defaults').set('Authorization', `Bearer ${ws.fullKey}`).send({ default_playback_restriction_id: null }).expect(200);
    await owner.send('delete', `/v1/playback-restrictions/${pr.id}`).expect(204);
  });

  it('encoding defaults and simulcast targets are the owners\' to change; members still manage streams (issue 33 row 9)', async () => {
    const ws = await s.newWorkspace();
    const member = await person(ws.id, 'member');
    const owner = await person(ws.id, 'owner');
    const target = { url: 'rtmp://127.0.0.1:1935/live2', stream_key: 'third-party-key' };
    const stream = (await owner.send('post', '/v1/live-streams', { title: 'owner', simulcast_targets: [target] }).expect(201)).body;
    const refused: Array<[string, request.Test]> = [
      ['encoding defaults', member.send('patch', '/v1/encoding-defaults', { default_codecs: ['h264', 'hevc'] })],
      ['a new stream with a target', member.send('post', '/v1/live-streams', { title: 'member', simulcast_targets: [target] })],
      ['a target added', member.send('patch', `/v1/live-streams/${stream.id}`, { simulcast_targets: [target, { url: 'rtmp://127.0.0.1:1936/app', stream_key: 'k' }] })],
      ['targets removed', member.send('patch', `/v1/live-streams/${stream.id}`, { simulcast_targets: [] })],
    ];
    for (const [what, t] of refused) {
      const r = await t;
      assert.equal(r.status === 403 && r.body.error.code, 'owner_required', what);
    }
    assert.deepEqual((await s.db('workspaces').where({ id: ws.id }).first('default_codecs')).default_codecs ?? ['h264'], ['h264']);
    assert.equal((await member.send('get', `/v1/live-streams/${stream.id}`).expect(200)).body.simulcast_targets.length, 1);
    // Members read the defaults, and manage streams otherwise.
    await member.send('get', '/v1/encoding-defaults').expect(200);
    const own = (await member.send('post', '/v1/live-streams', { title: 'member', simulcast_targets: [] }).expect(201)).body;
    await member.send('patch', `/v1/live-streams/${stream.id}`, { title: 'renamed by a member' }).expect(200);
    await member.send('delete', `/v1/live-streams/${own.id}`).expect(204);
    // Owners and full-access keys change both.
    await owner.send('patch', '/v1/encoding-defaults', { default_codecs: ['h264', 'hevc'] }).expect(200);
    await owner.send('patch', `/v1/live-streams/${stream.id}`, { simulcast_targets: [] }).expect(200);
    await request(s.url).patch(`/v1/live-streams/${stream.id}`).set('Authorization', `Bearer ${ws.fullKey}`).send({ simulcast_targets: [target] }).expect(200);
  });

  it('an owner manages keys and webhooks from the dashboard', async () => {
    const ws = await s.newWorkspace();
    const owner = await person(ws.id, 'owner');
    const key = await owner.send('post', '/v1/api-keys', { access: 'full', name: 'owner made' }).expect(201);
    assert.equal((await s.db('api_keys').where({ id: key.body.id }).first('created_by')).created_by, owner.id);
    const hook = await owner.send('post', '/v1/webhooks', { url: 'http://127.0.0.1:9/hook' }).expect(201);
    await owner.send('delete', `/v1/webhooks/${hook.body.id}`).expect(204);
  });

  it('removing a person revokes the keys they made, and the keys those keys made', async () => {
    const ws = await s.newWorkspace();
    const member = await person(ws.id, 'member');
    const owner = await person(ws.id, 'owner');
    const read = await member.send('post', '/v1/api-keys', { access: 'read', name: 'member key' }).expect(201);
    const full = await owner.send('post', '/v1/api-keys', { access: 'full', name: 'owner key' }).expect(201);
    // A key made with the owner's key is the owner's too.
    const child = await request(s.url).post('/v1/api-keys').set('Authorization', `Bearer ${full.body.secret}`).send({ access: 'read', name: 'child' }).expect(201);
    for (const k of [read, full, child]) assert.equal(await keyWorks(k.body.secret), 200); // cached now

    await s.db('memberships').where({ person_id: member.id, workspace_id: ws.id }).delete();
    await until401(read.body.secret);
    assert.equal(await keyWorks(full.body.secret), 200, 'the owner\'s keys are not the member\'s');

    await s.db('people').where({ id: owner.id }).delete();
    await until401(full.body.secret);
    await until401(child.body.secret);
    assert.equal(await keyWorks(ws.fullKey), 200, 'keys made with the admin CLI stay');
  });

  it('an owner made a member keeps no full-access key', async () => {
    const ws = await s.newWorkspace();
    const owner = await person(ws.id, 'owner');
    const full = await owner.send('post', '/v1/api-keys', { access: 'full', name: 'before demotion' }).expect(201);
    const read = await owner.send('post', '/v1/api-keys', { access: 'read', name: 'stays' }).expect(201);
    await s.db('memberships').where({ person_id: owner.id, workspace_id: ws.id }).update({ role: 'member' });
    await until401(full.body.secret);
    assert.equal(await keyWorks(read.body.secret), 200);
  });
});
