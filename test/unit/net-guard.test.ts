import assert from 'node:assert/strict';
import { assertPublicUrl, classifyAddress, isAllowedAddress, isLoopback, UrlNotAllowedError } from '../../lib/net/guard';

// [address, allowed] — SPEC §12: only global unicast passes; IPv6 forms embedding IPv4 are judged by it or refused.
const CASES: Array<[string, boolean]> = [
  // IPv4: public
  ['8.8.8.8', true],
  ['1.1.1.1', true],
  ['93.184.216.34', true],
  ['172.15.255.255', true],
  ['172.32.0.1', true],
  ['100.63.255.255', true],
  ['100.128.0.1', true],
  ['192.169.0.1', true],
  ['198.17.255.255', true],
  ['198.20.0.1', true],
  ['223.255.255.254', true],
  ['192.175.48.1', true], // AS112 anycast: globally reachable
  // IPv4: not global unicast
  ['0.0.0.0', false],
  ['0.1.2.3', false],
  ['127.0.0.1', false],
  ['127.1.2.3', false],
  ['127.255.255.254', false],
  ['10.0.0.1', false],
  ['10.255.255.255', false],
  ['172.16.0.1', false],
  ['172.31.255.254', false],
  ['192.168.0.1', false],
  ['192.168.255.255', false],
  ['169.254.0.1', false],
  ['169.254.169.254', false], // cloud metadata
  ['100.64.0.1', false], // CGNAT
  ['100.127.255.254', false],
  ['192.0.0.1', false],
  ['192.0.0.170', false],
  ['192.0.2.1', false], // TEST-NET-1
  ['198.51.100.7', false],
  ['203.0.113.9', false],
  ['192.88.99.1', false], // 6to4 relay anycast (deprecated)
  ['198.18.0.1', false], // benchmarking
  ['198.19.255.254', false],
  ['224.0.0.1', false],
  ['239.255.255.250', false],
  ['240.0.0.1', false],
  ['255.255.255.255', false],
  // IPv6: public
  ['2606:4700:4700::1111', true],
  ['2001:4860:4860::8888', true],
  ['2a00:1450:4001:82a::200e', true],
  ['2400:cb00:2048:1::c629:d7a2', true],
  // IPv6: special
  ['::', false],
  ['::1', false],
  ['fe80::1', false],
  ['fe80::1%eth0', false],
  ['febf::1', false],
  ['fc00::1', false],
  ['fd12:3456:789a::1', false],
  ['fec0::1', false], // deprecated site-local
  ['feff::1', false],
  ['ff02::1', false],
  ['ff05::1:3', false],
  ['100::1', false], // discard
  ['2001:db8::1', false], // documentation
  ['2001:2::1', false], // benchmarking
  ['3fff::1', false], // documentation (RFC 9637)
  ['5f00::1', false], // segment routing
  ['4000::1', false], // outside 2000::/3
  // IPv6 forms embedding IPv4
  ['::127.0.0.1', false], // IPv4-compatible (deprecated): refused
  ['::8.8.8.8', false],
  ['0:0:0:0:0:0:127.0.0.1', false],
  ['::7f00:1', false],
  ['::10.0.0.1', false],
  ['::ffff:127.0.0.1', false], // IPv4-mapped
  ['::ffff:10.0.0.1', false],
  ['::ffff:169.254.169.254', false],
  ['::ffff:7f00:1', false],
  ['::ffff:8.8.8.8', true],
  ['::ffff:0:127.0.0.1', false], // IPv4-translated
  ['::ffff:0:192.168.1.1', false],
  ['::ffff:0:8.8.8.8', true],
  ['64:ff9b::127.0.0.1', false], // NAT64 well-known
  ['64:ff9b::10.1.2.3', false],
  ['64:ff9b::a9fe:a9fe', false],
  ['64:ff9b::8.8.8.8', true],
  ['64:ff9b:1::8.8.8.8', false], // NAT64 local-use: refused
  ['64:ff9b:1::a00:1', false],
  ['2002:7f00:1::', false], // 6to4 embedding 127.0.0.1
  ['2002:a00:1::1', false], // 10.0.0.1
  ['2002:a9fe:a9fe::1', false], // 169.254.169.254
  ['2002:c0a8:101::1', false], // 192.168.1.1
  ['2002:808:808::1', true], // 8.8.8.8
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false], // Teredo (RFC 4380 example)
  ['2001::7f00:1', false],
  ['2001:0:53aa:64c:0:0:f5ff:fffe', false],
  // Not addresses at all
  ['localhost', false],
  ['example.com', false],
  ['0x7f.1', false],
  ['2130706433', false],
  ['0177.0.0.1', false],
  ['', false],
];

describe('net/guard: address classification', () => {
  it(`judges ${CASES.length} addresses`, () => {
    assert.ok(CASES.length >= 60);
    const wrong = CASES.filter(([ip, allowed]) => isAllowedAddress(ip) !== allowed).map(([ip, allowed]) => `${ip} should be ${allowed ? 'allowed' : 'refused'} (${classifyAddress(ip).reason})`);
    assert.deepEqual(wrong, []);
  });

  it('allows only real loopback when loopback is allowed (tests), never a 6to4/NAT64 wrapping of it', () => {
    for (const ip of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1']) {
      assert.equal(isLoopback(ip), true, ip);
      assert.equal(isAllowedAddress(ip, true), true, ip);
    }
    for (const ip of ['2002:7f00:1::', '64:ff9b::127.0.0.1', '::127.0.0.1', '10.0.0.1', '169.254.169.254']) {
      assert.equal(isAllowedAddress(ip, true), false, ip);
    }
  });

  it('names the embedded IPv4 in its reason', () => {
    assert.match(classifyAddress('2002:a9fe:a9fe::1').reason, /169\.254\.169\.254 is linkLocal/);
    assert.match(classifyAddress('::ffff:0:10.0.0.1').reason, /10\.0\.0\.1 is private/);
    assert.match(classifyAddress('2001::1').reason, /Teredo/);
  });

  it('refuses URLs whose host is a private address in any spelling the URL parser accepts', async () => {
    for (const url of [
      'http://127.0.0.1/',
      'http://2130706433/', // decimal
      'http://0x7f000001/', // hex
      'http://0177.0.0.1/', // octal
      'http://0x7f.1/',
      'http://127.1/',
      'http://[::ffff:7f00:1]/',
      'http://[::ffff:0:a00:1]/',
      'http://[2002:a9fe:a9fe::1]/',
      'http://[64:ff9b:1::a00:1]/',
      'http://[fec0::1]/',
      'http://169.254.169.254/latest/meta-data/',
      'http://0.0.0.0:8080/',
    ]) {
      await assert.rejects(assertPublicUrl(url), UrlNotAllowedError, url);
    }
    assert.equal((await assertPublicUrl('http://8.8.8.8/x')).hostname, '8.8.8.8');
    assert.equal((await assertPublicUrl('http://[2606:4700:4700::1111]/x')).hostname, '[2606:4700:4700::1111]');
  });
});
