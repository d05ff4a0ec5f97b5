import dns from 'node:dns';
import net from 'node:net';

/** A URL the service refuses to contact (SPEC §4: SSRF). */
export class UrlNotAllowedError extends Error {
  readonly code = 'url_not_allowed';
}

const blocked = new net.BlockList();
// RFC 6890 special-purpose ranges, private networks, and the cloud metadata addresses.
for (const [addr, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(addr, bits, 'ipv4');
}
for (const [addr, bits] of [
  ['::', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(addr, bits, 'ipv6');
}
const loopback = new net.BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** Unwraps IPv4-mapped IPv6 (`::ffff:10.0.0.1`) so it is judged as the IPv4 it is. */
function normalize(ip: string): { ip: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return { ip: mapped[1], family: 'ipv4' };
  return { ip, family: net.isIPv4(ip) ? 'ipv4' : 'ipv6' };
}

export function isLoopback(ip: string): boolean {
  const n = normalize(ip);
  return loopback.check(n.ip, n.family);
}

/** True when the address may be contacted: public unicast, or loopback when the test setting allows it. */
export function isAllowedAddress(ip: string, allowLoopback = false): boolean {
  const n = normalize(ip);
  if (loopback.check(n.ip, n.family)) return allowLoopback;
  return !blocked.check(n.ip, n.family);
}

/** Checks scheme and shape; the address is checked at connect time (see `guardedLookup`). */
export function parsePublicUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UrlNotAllowedError('not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UrlNotAllowedError('only http and https URLs are allowed');
  if (url.username || url.password) throw new UrlNotAllowedError('URLs with credentials are not allowed');
  return url;
}

/** Resolves a URL's host and refuses it when any of its addresses is not allowed. */
export async function assertPublicUrl(text: string, allowLoopback = false): Promise<URL> {
  const url = parsePublicUrl(text);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addrs = net.isIP(host) ? [{ address: host }] : await dns.promises.lookup(host, { all: true }).catch(() => {
    throw new UrlNotAllowedError(`the host ${host} does not resolve`);
  });
  for (const a of addrs) {
    if (!isAllowedAddress(a.address, allowLoopback)) throw new UrlNotAllowedError(`the host ${host} resolves to a non-public address`);
  }
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that refuses non-public addresses. The address checked is the
 * address connected to, so a DNS answer that changes between check and connect (rebinding)
 * cannot slip through.
 */
export function guardedLookup(allowLoopback: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = addresses as dns.LookupAddress[];
      const bad = list.find((a) => !isAllowedAddress(a.address, allowLoopback));
      if (bad || list.length === 0) {
        return callback(Object.assign(new UrlNotAllowedError(`the host ${hostname} resolves to a non-public address`), { errno: 0 }), '');
      }
      if (options.all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}
