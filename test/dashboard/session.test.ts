import assert from 'node:assert/strict';
import request from 'supertest';
import { buildDashboard } from '../../lib/dashboard/build';
import { startStack, type Stack } from '../support/stack';
import { account, sessionCookie } from './accounts';

describe('Dashboard sessions (API level)', function () {
  this.timeout(60_000);
  let s: Stack;
  let origin: string;

  before(async function () {
    this.timeout(120_000);
    s = await startStack({ workers: [], env: { LOGIN_MAX_FAILURES_PER_ACCOUNT: '3', LOGIN_MAX_FAILURES_PER_IP: '8' } });
    origin = s.url;
    // Every stack of a run shares one database; failures other files left would count here.
    await s.db('login_failures').delete();
  });

  const agent = () => request(s.url);
  const signIn = (email: string, password: string, from = origin) =>
    agent().post('/dashboard/session').set('Origin', from).send({ email, password });

  it('signs in with the right password: HttpOnly SameSite cookie, who-am-I with workspaces and a CSRF token', async () => {
    const a = await account(s, 'owner@session.test', s.ws.id);
    const res = await signIn('Owner@Session.test', a.password).expect(200);
    const raw = String(res.headers['set-cookie']);
    assert.match(raw, /httponly/i);
    assert.match(raw, /samesite=lax/i);
    assert.equal(res.body.person.email, 'owner@session.test');
    assert.equal(res.body.workspace_id, s.ws.id);
    assert.deepEqual(res.body.workspaces.map((w: { id: string; role: string }) => [w.id, w.role]), [[s.ws.id, 'owner']]);
    const cookie = sessionCookie(res.headers['set-cookie']);
    const me = await agent().get('/dashboard/session').set('Cookie', cookie).expect(200);
    assert.equal(me.body.csrf_token, res.body.csrf_token);
    // Only the hash of the cookie's token is stored.
    const rows = await s.db('sessions').select('token_hash');
    assert.ok(rows.every((r) => !cookie.includes(r.token_hash)));
  });

  it('refuses a wrong password and an unknown email alike, and signs out', async () => {
    const a = await account(s, 'second@session.test', s.ws.id);
    const wrong = await signIn(a.email, 'not the password').expect(401);
    assert.equal(wrong.body.error.code, 'invalid_credentials');
    const unknown = await signIn('nobody@session.test', 'whatever it is').expect(401);
    assert.equal(unknown.body.error.code, 'invalid_credentials');
    const ok = await signIn(a.email, a.password).expect(200);
    const cookie = sessionCookie(ok.headers['set-cookie']);
    await agent().delete('/dashboard/session').set('Cookie', cookie).set('Origin', origin).set('X-CSRF-Token', ok.body.csrf_token).expect(204);
    await agent().get('/dashboard/session').set('Cookie', cookie).expect(401);
    await agent().get('/v1/videos').set('Cookie', cookie).expect(401);
  });

  it('throttles an account after repeated failures, even for the right password', async () => {
    const a = await account(s, 'victim@session.test', s.ws.id);
    for (let i = 0; i < 3; i++) await signIn(a.email, `guess ${i}`).expect(401);
    const res = await signIn(a.email, a.password).expect(429);
    assert.equal(res.body.error.code, 'sign_in_throttled');
    assert.ok(Number(res.headers['retry-after']) > 0);
  });

  it('throttles an IP that tries many accounts', async () => {
    await s.db('login_failures').delete();
    for (let i = 0; i < 8; i++) await signIn(`spray${i}@session.test`, 'password1234').expect(401);
    const res = await signIn('fresh@session.test', 'password1234').expect(429);
    assert.equal(res.body.error.code, 'sign_in_throttled');
    await s.db('login_failures').delete();
  });

  describe('a session stands in for a key', () => {
    let cookie: string;
    let csrf: string;
    before(async () => {
      await s.db('login_failures').delete();
      const a = await account(s, 'keys@session.test', s.ws.id);
      const res = await signIn(a.email, a.password).expect(200);
      cookie = sessionCookie(res.headers['set-cookie']);
      csrf = res.body.csrf_token;
    });

    it('reads the public API with the cookie alone', async () => {
      const res = await agent().get('/v1/api-keys').set('Cookie', cookie).expect(200);
      assert.ok(res.body.data.length >= 2);
      await agent().get('/usage').set('Cookie', cookie).expect(200);
    });

    it('changes state only with the CSRF token and from the same origin', async () => {
      const post = () => agent().post('/v1/tags').set('Cookie', cookie).send({ name: 'csrf-check' });
      assert.equal((await post().set('Origin', origin).expect(403)).body.error.code, 'csrf_token');
      assert.equal((await post().set('Origin', origin).set('X-CSRF-Token', 'x'.repeat(csrf.length)).expect(403)).body.error.code, 'csrf_token');
      assert.equal((await post().set('Origin', 'http://evil.example').set('X-CSRF-Token', csrf).expect(403)).body.error.code, 'csrf_origin');
      assert.equal((await post().set('Sec-Fetch-Site', 'cross-site').set('X-CSRF-Token', csrf).expect(403)).body.error.code, 'csrf_origin');
      assert.equal(await s.db('tags').where({ name: 'csrf-check' }).first(), undefined);
      await post().set('Origin', origin).set('X-CSRF-Token', csrf).expect(201);
    });

    it('refuses sign-in from another origin (login CSRF)', async () => {
      const res = await signIn('keys@session.test', 'correct horse battery', 'http://evil.example').expect(403);
      assert.equal(res.body.error.code, 'csrf_origin');
    });

    it('a presented key wins over the cookie', async () => {
      const other = await s.newWorkspace();
      const res = await agent().get('/v1/usage').set('Cookie', cookie).set('Authorization', `Bearer ${other.readKey}`).expect(200);
      assert.equal(res.body.workspace_id, other.id);
    });

    it('switches only to workspaces the person belongs to; another workspace stays invisible', async () => {
      const other = await s.newWorkspace();
      const init = await s.post('/v1/upload/init', { filename: 'x.mp4', size: 10, content_type: 'video/mp4', title: 'theirs' }, other.fullKey).expect(201);
      const put = (ws: string) => agent().put('/dashboard/session/workspace').set('Cookie', cookie).set('Origin', origin).set('X-CSRF-Token', csrf).send({ workspace_id: ws });
      assert.equal((await put(other.id).expect(403)).body.error.code, 'not_a_member');
      await agent().get(`/v1/videos/${init.body.video_id}`).set('Cookie', cookie).expect(404);
      const list = await agent().get('/v1/videos').set('Cookie', cookie).expect(200);
      assert.ok(!list.body.data.some((v: { id: string }) => v.id === init.body.video_id));

      const person = await s.db('people').where({ email: 'keys@session.test' }).first('id');
      await s.db('memberships').insert({ person_id: person.id, workspace_id: other.id, role: 'member' });
      const switched = await put(other.id).expect(200);
      assert.equal(switched.body.workspace_id, other.id);
      const mine = await agent().get('/v1/videos').set('Cookie', cookie).expect(200);
      assert.deepEqual(mine.body.data.map((v: { id: string }) => v.id), [init.body.video_id]);
      // Removed from the workspace: the session loses it at once.
      await s.db('memberships').where({ person_id: person.id, workspace_id: other.id }).delete();
      assert.equal((await agent().get('/v1/videos').set('Cookie', cookie).expect(403)).body.error.code, 'no_workspace');
    });
  });

  it('keeps last_used_at of a key to the minute', async () => {
    const ws = await s.newWorkspace();
    await s.get('/v1/videos', ws.readKey).expect(200);
    const key = async () => s.db('api_keys').where({ workspace_id: ws.id, access: 'read' }).first('last_used_at');
    for (let i = 0; i < 50 && !(await key()).last_used_at; i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok((await key()).last_used_at, 'last_used_at was set');
  });

  it('builds once: a second build of the same sources is a no-op', async () => {
    await buildDashboard();
    assert.equal((await buildDashboard()).built, false);
  });

  it('serves the dashboard page no-cache and its hashed assets immutable', async () => {
    const page = await agent().get('/dashboard/videos/x').expect(200);
    assert.equal(page.headers['cache-control'], 'no-cache');
    assert.match(page.headers['content-security-policy'], /script-src 'self'/);
    const asset = /\/dashboard\/assets\/[\w.-]+\.js/.exec(page.text)?.[0];
    assert.ok(asset, 'the page names its script');
    const js = await agent().get(asset).expect(200);
    assert.match(js.headers['cache-control'], /immutable/);
    await agent().get('/dashboard/assets/..%2f..%2fpackage.json').expect(404);
  });
});
