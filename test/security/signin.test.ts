import assert from 'node:assert/strict';
import request from 'supertest';
import { randomToken } from '../../lib/ids';
import { startStack, type Stack } from '../support/stack';
import { account } from '../dashboard/accounts';

// Issue 22 item 3: the sign-in throttle decides atomically, and backs off per (email, address).
describe('security: sign-in throttling', function () {
  this.timeout(120_000);
  let direct: Stack; // faces clients directly (TRUSTED_PROXIES empty, the default)
  let proxied: Stack; // behind a proxy on loopback, so tests can speak from several addresses

  before(async function () {
    direct = await startStack({ workers: [] });
    proxied = await startStack({ workers: [], env: { TRUSTED_PROXIES: '127.0.0.1/32' } });
  });
  after(async () => {
    await direct.db('login_failures').where('email', 'like', '%@throttle.test').orWhere({ ip: '127.0.0.1' }).delete();
  });

  const signIn = (s: Stack, email: string, password: string, from?: string) => {
    const t = request(s.url).post('/dashboard/session').set('Origin', s.url);
    if (from) t.set('X-Forwarded-For', from);
    return t.send({ email, password });
  };
  const fresh = () => `${randomToken(6).replace(/[^a-z0-9]/gi, 'x').toLowerCase()}@throttle.test`;

  it('20 parallel sign-ins, 15 wrong then the right one: at most 5 passwords are checked and the right one is refused', async () => {
    const a = await account(direct, fresh(), direct.ws.id);
    const passwords = [...Array.from({ length: 15 }, (_, i) => `wrong guess ${i}`), a.password, ...Array.from({ length: 4 }, (_, i) => `late ${i}`)];
    const answers = await Promise.all(passwords.map((p) => signIn(direct, a.email, p)));
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses[15], 429, `the right password (16th) got ${statuses[15]}: ${statuses.join(',')}`);
    assert.equal(statuses.filter((x) => x === 200).length, 0);
    assert.equal(statuses.filter((x) => x === 401).length, 5, statuses.join(','));
    assert.equal(statuses.filter((x) => x === 429).length, 15, statuses.join(','));
    for (const r of answers.filter((x) => x.status === 429)) assert.ok(Number(r.headers['retry-after']) >= 1);
  });

  it('a stranger who spends the guesses does not lock the owner out at the owner\'s address', async () => {
    const a = await account(proxied, fresh(), proxied.ws.id);
    for (let i = 0; i < 5; i++) await signIn(proxied, a.email, `stranger ${i}`, '198.51.100.66').expect(401);
    assert.equal((await signIn(proxied, a.email, a.password, '198.51.100.66').expect(429)).body.error.code, 'sign_in_throttled');
    await signIn(proxied, a.email, a.password, '203.0.113.10').expect(200);
    // The owner's success does not clear the stranger's back-off.
    await signIn(proxied, a.email, a.password, '198.51.100.66').expect(429);
  });

  it('rotating X-Forwarded-For escapes neither the account nor the address limit when no proxy is trusted', async () => {
    const a = await account(direct, fresh(), direct.ws.id);
    for (let i = 0; i < 5; i++) await signIn(direct, a.email, `rotating ${i}`, `198.51.100.${i + 1}`).expect(401);
    assert.equal((await signIn(direct, a.email, a.password, '198.51.100.200').expect(429)).body.error.code, 'sign_in_throttled');

    const s = await startStack({ workers: [], env: { LOGIN_MAX_FAILURES_PER_IP: '4' } });
    try {
      await s.db('login_failures').where({ ip: '127.0.0.1' }).delete();
      for (let i = 0; i < 4; i++) await signIn(s, fresh(), 'spraying passwords', `192.0.2.${i + 1}`).expect(401);
      assert.equal((await signIn(s, fresh(), 'spraying passwords', '192.0.2.77').expect(429)).body.error.code, 'sign_in_throttled');
    } finally {
      // Loopback is every test's address: leave it unthrottled for the files after this one.
      await s.db('login_failures').where({ ip: '127.0.0.1' }).delete();
      await s.close();
    }
  });

  it('counts every address together up to LOGIN_MAX_FAILURES_PER_EMAIL', async () => {
    const s = await startStack({ workers: [], env: { TRUSTED_PROXIES: '127.0.0.1/32', LOGIN_MAX_FAILURES_PER_EMAIL: '6' } });
    const a = await account(s, fresh(), s.ws.id);
    for (let i = 0; i < 6; i++) await signIn(s, a.email, `botnet ${i}`, `192.0.2.${i + 1}`).expect(401);
    await signIn(s, a.email, a.password, '203.0.113.99').expect(429);
    await s.close();
  });
});
