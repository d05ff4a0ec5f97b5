import { domainToASCII } from 'node:url';
import { getPublicSuffix, parse } from 'tldts';

/**
 * One entry of an allow-list, normalised: `host` is ASCII (IDNs punycoded by the WHATWG URL
 * parser, as browsers send them in Referer and Origin), `wildcard` means any subdomain of `host`
 * (not `host` itself), `port` null means any port. `*` alone allows every site.
 */
export interface DomainRule {
  host: string;
  wildcard: boolean;
  port: number | null;
}

export type DomainParse = { ok: true; text: string; rule: DomainRule | 'any' } | { ok: false; message: string };

/**
 * Parses `example.com`, `*.example.com`, `example.com:8443`, `bücher.de`, `localhost`, `[::1]`,
 * `127.0.0.1` into a rule and its canonical text (what reads show). Refused: schemes, paths,
 * a wildcard anywhere but the first label, and a wildcard over a public suffix (`*.co.uk` would
 * allow every site under it; the Public Suffix List via tldts says which those are).
 */
export function parseDomain(input: string): DomainParse {
  const raw = input.trim().toLowerCase();
  if (raw === '*') return { ok: true, text: '*', rule: 'any' };
  if (!raw || raw.length > 253 + 8) return { ok: false, message: 'must be a domain such as example.com or *.example.com' };
  if (/[/?#@\s]/.test(raw) || raw.includes('://')) return { ok: false, message: 'a domain only: no scheme, path, query or user' };
  const wildcard = raw.startsWith('*.');
  const rest = wildcard ? raw.slice(2) : raw;
  if (rest.includes('*')) return { ok: false, message: 'a wildcard may only be the first label (*.example.com)' };
  // Host and port through the URL parser: IPv6 in brackets, punycode, port range.
  let url: URL;
  try {
    url = new URL(`http://${rest}`);
  } catch {
    return { ok: false, message: 'is not a valid domain' };
  }
  if (url.pathname !== '/' || url.username || url.password) return { ok: false, message: 'is not a valid domain' };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : domainToASCII(url.hostname) || url.hostname;
  const explicitPort = /:(\d+)$/.exec(rest);
  const port = explicitPort ? Number(explicitPort[1]) : null;
  if (port !== null && (port < 1 || port > 65535)) return { ok: false, message: 'port must be 1–65535' };
  if (wildcard) {
    const info = parse(host);
    if (info.isIp) return { ok: false, message: 'a wildcard needs a domain, not an address' };
    const suffix = getPublicSuffix(host, { allowPrivateDomains: true });
    if (!host.includes('.') || suffix === host) return { ok: false, message: `*.${host} would allow every site under a public suffix` };
  }
  const text = `${wildcard ? '*.' : ''}${host.includes(':') ? `[${host}]` : host}${port !== null ? `:${port}` : ''}`;
  return { ok: true, text, rule: { host, wildcard, port } };
}

/** The rules of stored (already canonical) entries; unparseable ones are dropped, never widened. */
export function compileRules(entries: readonly string[]): Array<DomainRule | 'any'> {
  const out: Array<DomainRule | 'any'> = [];
  for (const e of entries) {
    const p = parseDomain(e);
    if (p.ok) out.push(p.rule);
  }
  return out;
}

/** Does `host` (ASCII, from a parsed URL) with `port` match one of the rules? */
export function hostAllowed(rules: ReadonlyArray<DomainRule | 'any'>, host: string, port: number): boolean {
  for (const r of rules) {
    if (r === 'any') return true;
    if (r.port !== null && r.port !== port) continue;
    if (r.wildcard ? host.endsWith(`.${r.host}`) : host === r.host) return true;
  }
  return false;
}

/** `http(s)://host[:port]/…` → its host and effective port; null for anything else (file:, data:, garbage). */
export function siteOf(urlText: string): { origin: string; host: string; port: number } | null {
  let u: URL;
  try {
    u = new URL(urlText);
  } catch {
    return null;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return { origin: u.origin, host, port: u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80 };
}

/**
 * CSP `frame-ancestors` sources for the rules (CSP3 §6.3.2.6). A rule without a port allows any
 * port (`:*`); a scheme-less source matches the player's own scheme (and http→https upgrades).
 */
export function frameAncestors(rules: ReadonlyArray<DomainRule | 'any'>, selfOrigins: readonly string[]): string {
  if (rules.includes('any')) return '*';
  const sources = new Set<string>(["'self'", ...selfOrigins]);
  for (const r of rules as DomainRule[]) {
    const host = r.host.includes(':') ? `[${r.host}]` : r.host;
    sources.add(`${r.wildcard ? '*.' : ''}${host}:${r.port ?? '*'}`);
  }
  return [...sources].join(' ');
}
