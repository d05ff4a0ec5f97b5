import ipaddr from 'ipaddr.js';

/** `203.0.113.7`, `2001:db8::/32`, … → the canonical claim text; null when not an address or CIDR. */
export function parseIpClaim(text: string): string | null {
  try {
    if (text.includes('/')) {
      const [addr, bits] = ipaddr.parseCIDR(text);
      const a = addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
      const b = a === addr ? bits : bits - 96;
      if (b < 0) return null;
      return `${a.toString()}/${b}`;
    }
    return ipaddr.process(text).toString();
  } catch {
    return null;
  }
}

/** Is `client` (as Koa's ctx.ip or a socket gives it) the claim's address or inside its range? */
export function ipMatches(claim: string, client: string | undefined): boolean {
  if (!client) return false;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(client);
  } catch {
    return false;
  }
  try {
    if (claim.includes('/')) {
      const range = ipaddr.parseCIDR(claim);
      return addr.kind() === range[0].kind() && addr.match(range);
    }
    const want = ipaddr.process(claim);
    return want.kind() === addr.kind() && want.toString() === addr.toString();
  } catch {
    return false;
  }
}
