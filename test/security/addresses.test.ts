import assert from 'node:assert/strict';
import { clientAddressOf, parseTrustedProxies, TrustedProxies } from '../../lib/net/proxies';
import { loadConfig } from '../../lib/config';
import { startStack, type Stack } from '../support/stack';

// Issue 22 item 4: X-Forwarded-For is believed only from TRUSTED_PROXIES.
describe('security: client addresses', function () {
  describe('clientAddressOf', () => {
    const trusted = new TrustedProxies(parseTrustedProxies('10.0.0.0/8, ::1'));
    const none = new TrustedProxies([]);

    it('ignores the header unless the peer is a trusted proxy', () => {
      assert.equal(clientAddressOf('203.0.113.5', '198.51.100.1', trusted), '203.0.113.5');
      assert.equal(clientAddressOf('127.0.0.1', '198.51.100.1', none), '127.0.0.1');
      assert.equal(clientAddressOf('::ffff:203.0.113.5', undefined, none), '203.0.113.5');
    });

    it('takes the right-most hop that is not a trusted proxy', () => {
      assert.equal(clientAddressOf('10.0.0.2', '1.1.1.1, 198.51.100.7, 10.0.0.9', trusted), '198.51.100.7');
      assert.equal(clientAddressOf('::1', ['6.6.6.6', '198.51.100.8'], trusted), '198.51.100.8');
      // Only trusted hops: the left-most of them. Garbage: the proxy that passed it on.
      assert.equal(clientAddressOf('10.0.0.2', '10.0.0.3', trusted), '10.0.0.3');
      assert.equal(clientAddressOf('10.0.0.2', '198.51.100.1, not-an-ip', trusted), '10.0.0.2');
    });

    it('refuses a TRUSTED_PROXIES that is not CIDRs', () => {
      assert.throws(() => loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8,example.com' }), /TRUSTED_PROXIES/);
      assert.deepEqual(loadConfig({ TRUSTED_PROXIES: '10.0.0.1, fd00::/8' }).trustedProxies, ['10.0.0.1/32', 'fd00::/8']);
      assert.deepEqual(loadConfig({}).trustedProxies, []);
    });
  });

  describe('the invalid-key limit', function () {
    this.timeout(120_000);
    const stacks: Stack[] = [];
    after(async () => {
      for (const s of stacks) await s.close();
    });
    const badKey = (s: Stack, from: string, i: number) =>
      fetch(`${s.url}/v1/videos`, { headers: { authorization: `Bearer vhk_not_a_key_${i}`, 'x-forwarded-for': from } }).then((r) => r.status);

    it('rotating X-Forwarded-For does not escape it when no proxy is trusted', async () => {
      const s = await startStack({ workers: [], env: { INVALID_KEY_LIMIT_PER_MINUTE: '5' } });
      stacks.push(s);
      try {
        // 12 tries over at most two one-minute windows: one window sees 6 or more.
        const statuses: number[] = [];
        for (let i = 0; i < 12; i++) statuses.push(await badKey(s, `198.51.100.${i + 1}`, i));
        assert.ok(statuses.includes(429), statuses.join(','));
      } finally {
        // The limiter's rows are shared by every stack of the run; give loopback its guesses back.
        await s.db('rate_limits').where('key_id', 'like', 'badkey:%').delete();
      }
    });

    it('with TRUSTED_PROXIES set, the forwarded address is the one limited', async () => {
      const s = await startStack({ workers: [], env: { INVALID_KEY_LIMIT_PER_MINUTE: '5', TRUSTED_PROXIES: '127.0.0.0/8' } });
      stacks.push(s);
      const attacker = `198.51.100.${Math.floor(Math.random() * 200) + 20}`;
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push(await badKey(s, `203.0.113.1, ${attacker}`, i));
      assert.ok(statuses.includes(429), statuses.join(','));
      // Another forwarded address is untouched: a plain 401, and a real key works from it.
      assert.equal(await badKey(s, '192.0.2.44', 99), 401);
      const ok = await fetch(`${s.url}/v1/videos`, { headers: { authorization: `Bearer ${s.ws.readKey}`, 'x-forwarded-for': '192.0.2.44' } });
      assert.equal(ok.status, 200);
      await s.db('rate_limits').where('key_id', 'like', 'badkey:%').delete();
    });
  });
});
