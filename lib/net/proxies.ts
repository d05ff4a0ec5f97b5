import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which peers may tell us the client's address (`TRUSTED_PROXIES`, SPEC §12). With none (the
 * default) `X-Forwarded-For` is ignored: the API faces clients directly and any of them could
 * write the header. With some, the header is read from the right and the first hop that is not a
 * trusted proxy is the client (the hops left of it were written by whoever sent the request).
 */
export class TrustedProxies {
  private readonly list = new net.BlockList();

  constructor(readonly cidrs: readonly string[]) {
    for (const cidr of cidrs) {
      const [range, bits] = ipaddr.parseCIDR(cidr);
      this.list.addSubnet(range.toString(), bits, range.kind() === 'ipv4' ? 'ipv4' : 'ipv6');
    }
  }

  get any(): boolean {
    return this.cidrs.length > 0;
  }

  trusts(address: string): boolean {
    if (!this.any) return false; // the default: nothing to look up on the request's path
    const type = net.isIP(address);
    return type !== 0 && this.list.check(address, type === 4 ? 'ipv4' : 'ipv6');
  }
}

/** "10.0.0.0/8, ::1" → validated CIDRs (a bare address is a /32 or /128); throws on anything else. */
export function parseTrustedProxies(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const cidr = s.includes('/') ? s : `${s}/${net.isIPv6(s) ? 128 : 32}`;
      if (!ipaddr.isValidCIDR(cidr)) throw new Error(`"${s}" is not an IP address or CIDR range`);
      return cidr;
    });
}

/** `::ffff:1.2.3.4` (a dual-stack socket's IPv4 peer) → `1.2.3.4`, so one client has one address. */
export function normaliseAddress(address: string): string {
  const bare = address.replace(/^\[|\]$/g, '');
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(bare) ? bare.slice(7) : bare;
}

/**
 * The client's address: the socket's peer, or, when that peer is a trusted proxy, the right-most
 * `X-Forwarded-For` hop that is not one. A hop that is not an IP address ends the walk at the
 * proxy that passed it on (we cannot know what stands behind garbage).
 */
export function clientAddressOf(peer: string | undefined, forwardedFor: string | string[] | undefined, trusted: TrustedProxies): string {
  let address = normaliseAddress(peer ?? '');
  if (!trusted.trusts(address) || !forwardedFor) return address;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map((h) => normaliseAddress(h.trim()));
  for (let i = hops.length - 1; i >= 0; i--) {
    if (!net.isIP(hops[i])) return address;
    address = hops[i];
    if (!trusted.trusts(address)) return address;
  }
  return address;
}
