import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** A URL the service refuses to contact (SPEC §4: SSRF). */
export class UrlNotAllowedError extends Error {
  readonly code = 'url_not_allowed';
}

export type AddressVerdict = { allowed: boolean; loopback: boolean; reason: string };

// IPv4 ranges ipaddr.js names that are globally routable unicast all the same (IANA special-purpose
// registry, "Globally Reachable": true): AS112 and AMT anycast.
const GLOBAL_V4_RANGES = new Set(['unicast', 'as112', 'amt']);

/** `via` names the IPv6 form the IPv4 was found in; only plain and IPv4-mapped loopback really reach loopback. */
function judgeV4(ip: ipaddr.IPv4, via?: string, reachesV4 = !via): AddressVerdict {
  const range = ip.range();
  const where = via ? `${via} embedding ${ip.toString()}` : ip.toString();
  if (range === 'loopback') return { allowed: false, loopback: reachesV4, reason: `${where} is loopback` };
  if (GLOBAL_V4_RANGES.has(range)) return { allowed: true, loopback: false, reason: `${where} is global unicast` };
  return { allowed: false, loopback: false, reason: `${where} is ${range}` };
}

const v4FromBytes = (b: number[]): ipaddr.IPv4 => new ipaddr.IPv4(b);

/**
 * Range classification (SPEC §12): only global unicast passes. IPv6 must be in 2000::/3 and in
 * no special range; the forms that embed an IPv4 are judged by it (IPv4-mapped ::ffff:a.b.c.d,
 * IPv4-translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) or refused outright
 * (IPv4-compatible ::a.b.c.d, deprecated; Teredo 2001::/32, whose client address is obfuscated
 * and server address arbitrary; NAT64 local-use 64:ff9b:1::/48). Site-local fec0::/10 is refused.
 */
export function classifyAddress(text: string): AddressVerdict {
  const bare = text.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare) || !(net.isIP(bare.split('%')[0]) || ipaddr.IPv4.isValidFourPartDecimal(bare))) {
    return { allowed: false, loopback: false, reason: `${text} is not an IP address` };
  }
  // ipaddr.js reads the deprecated IPv4-compatible ::a.b.c.d as IPv4-mapped ::ffff:a.b.c.d; it is neither reachable nor wanted.
  if (/^::\d+\.\d+\.\d+\.\d+(%.*)?$/.test(bare)) return { allowed: false, loopback: false, reason: `${bare} is IPv4-compatible (deprecated)` };
  const ip = ipaddr.parse(bare);
  if (ip.kind() === 'ipv4') return judgeV4(ip as ipaddr.IPv4);
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  const bytes = v6.toByteArray();
  switch (range) {
    case 'loopback':
      return { allowed: false, loopback: true, reason: `${bare} is loopback` };
    case 'ipv4Mapped':
      return judgeV4(v6.toIPv4Address(), 'IPv4-mapped ' + bare, true);
    case 'rfc6145':
      return judgeV4(v4FromBytes(bytes.slice(12)), 'IPv4-translated ' + bare);
    case 'rfc6052':
      // Only the well-known prefix's embedding is fixed (last 32 bits); local-use /48 prefixes are operator-defined.
      if (v6.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) return judgeV4(v4FromBytes(bytes.slice(12)), 'NAT64 ' + bare);
      return { allowed: false, loopback: false, reason: `${bare} is a local-use NAT64 address` };
    case '6to4':
      return judgeV4(v4FromBytes(bytes.slice(2, 6)), '6to4 ' + bare);
    case 'teredo':
      return { allowed: false, loopback: false, reason: `${bare} is a Teredo address` };
    case 'unicast':
      break;
    default:
      return { allowed: false, loopback: false, reason: `${bare} is ${range}` };
  }
  // Global unicast is 2000::/3; anything else unassigned (::a.b.c.d, 100::/8 ...) is refused.
  if ((bytes[0] & 0xe0) !== 0x20) return { allowed: false, loopback: false, reason: `${bare} is outside global unicast 2000::/3` };
  return { allowed: true, loopback: false, reason: `${bare} is global unicast` };
}

export function isLoopback(ip: string): boolean {
  const v = classifyAddress(ip);
  return v.loopback;
}

/** True when the address may be contacted: global unicast, or loopback when the test setting allows it. */
export function isAllowedAddress(ip: string, allowLoopback = false): boolean {
  const v = classifyAddress(ip);
  return v.allowed || (allowLoopback && v.loopback);
}

/** Checks scheme and shape; the address is checked at connect time (see `guardedLookup`). */
export function parsePublicUrl(text: string, schemes: readonly string[] = ['http:', 'https:']): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UrlNotAllowedError('not a valid URL');
  }
  if (!schemes.includes(url.protocol)) throw new UrlNotAllowedError(`only ${schemes.map((x) => x.slice(0, -1)).join(' and ')} URLs are allowed`);
  if (url.username || url.password) throw new UrlNotAllowedError('URLs with credentials are not allowed');
  return url;
}

/** A resolver: every address of a name (injectable, so tests can answer as a rebinding DNS server would). */
export type Lookup = (host: string) => Promise<Array<{ address: string }>>;
const systemLookup: Lookup = (host) => dns.promises.lookup(host, { all: true });

/**
 * Resolves a URL's host once and refuses it when any of its addresses is not allowed; returns
 * the checked address to connect to. A caller that connects to `address` (not to the name, which
 * would be resolved again) cannot be rebound to another address between check and connect.
 */
export async function resolvePublicUrl(text: string, allowLoopback = false, schemes?: readonly string[], lookup: Lookup = systemLookup): Promise<{ url: URL; address: string }> {
  const url = parsePublicUrl(text, schemes);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addrs = net.isIP(host) ? [{ address: host }] : await lookup(host).catch(() => {
    throw new UrlNotAllowedError(`the host ${host} does not resolve`);
  });
  if (!addrs.length) throw new UrlNotAllowedError(`the host ${host} does not resolve`);
  for (const a of addrs) {
    if (!isAllowedAddress(a.address, allowLoopback)) throw new UrlNotAllowedError(`the host ${host} resolves to a non-public address`);
  }
  return { url, address: addrs[0].address };
}

/** Resolves a URL's host and refuses it when any of its addresses is not allowed (`schemes`: live's simulcast targets are rtmp/rtmps). */
export async function assertPublicUrl(text: string, allowLoopback = false, schemes?: readonly string[]): Promise<URL> {
  return (await resolvePublicUrl(text, allowLoopback, schemes)).url;
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
