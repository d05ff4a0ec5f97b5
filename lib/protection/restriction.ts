import { compileRules, type DomainRule, hostAllowed, siteOf } from './domains';

/** A playback restriction as the hot paths use it (SPEC §20), compiled once per cached decision. */
export interface Restriction {
  id: string;
  allowedDomains: string[];
  allowNoReferrer: boolean;
  rules: Array<DomainRule | 'any'>;
}

export function compileRestriction(row: { id: string; allowed_domains: string[]; allow_no_referrer: boolean }): Restriction {
  return { id: row.id, allowedDomains: row.allowed_domains, allowNoReferrer: row.allow_no_referrer, rules: compileRules(row.allowed_domains) };
}

/**
 * Whether a browser on the page the request names may fetch: the Referer if there is one, else
 * the Origin (a fetch under `Referrer-Policy: no-referrer` still sends Origin on CORS requests),
 * else `allow_no_referrer`. The service's own origins (player, dashboard, CDN) always pass: the
 * embed page's player fetches from its own origin, and the embed page itself is checked against
 * the embedding site. `Origin: null` (sandboxed frames, file:) says no more than a missing header.
 */
export function viewerAllowed(r: Restriction, headers: { referer?: string; origin?: string }, selfOrigins: ReadonlySet<string>): boolean {
  const referer = headers.referer || undefined;
  const origin = headers.origin && headers.origin !== 'null' ? headers.origin : undefined;
  const named = referer ?? origin;
  if (!named) return r.allowNoReferrer;
  const site = siteOf(named);
  if (!site) return false;
  if (selfOrigins.has(site.origin)) return true;
  return hostAllowed(r.rules, site.host, site.port);
}

/** The origins of the service's own public URLs. */
export function selfOriginsOf(config: { publicBaseUrl?: string; cdnUrl?: string; playerUrl?: string }): Set<string> {
  return new Set([config.publicBaseUrl, config.cdnUrl, config.playerUrl].filter((u): u is string => !!u).map((u) => new URL(u).origin));
}
