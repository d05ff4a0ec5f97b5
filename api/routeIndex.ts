import type Router from '@koa/router';
import type { Layer, MatchResult } from '@koa/router';

/** The literal first segment of a layer's path, lowercased; undefined when it may match any (a parameter, a RegExp). */
function firstSegment(layer: Layer): string | undefined {
  if (typeof layer.path !== 'string') return undefined;
  return /^\/([A-Za-z0-9._~-]+)(?:\/|$)/.exec(layer.path)?.[1].toLowerCase();
}

/**
 * Makes `router.match` test only the layers that can match the request's first path segment
 * (`/videos/…` → the layers under `/videos` plus those that may match anything), in the
 * router's order, with @koa/router's own rule for what a match is. The router tests every layer's
 * RegExp on every request otherwise: a keyed read went through the public, session and API
 * routers' ~90 layers before its handler (docs/performance.md). Layers registered later are
 * indexed on the next match.
 */
export function indexByFirstSegment<R extends Router>(router: R): R {
  let indexed = -1;
  let bySegment = new Map<string, Layer[]>();
  let anySegment: Layer[] = [];
  const build = () => {
    const segments = new Set(router.stack.map(firstSegment).filter((s): s is string => s !== undefined));
    bySegment = new Map([...segments].map((seg) => [seg, router.stack.filter((l) => { const f = firstSegment(l); return f === undefined || f === seg; })]));
    anySegment = router.stack.filter((l) => firstSegment(l) === undefined);
    indexed = router.stack.length;
  };
  router.match = (path: string, method: string): MatchResult => {
    if (indexed !== router.stack.length) build();
    const m = /^\/([^/]*)/.exec(path);
    const layers = (m && bySegment.get(m[1].toLowerCase())) || anySegment;
    const result: MatchResult = { path: [], pathAndMethod: [], route: false };
    const verb = method.toUpperCase();
    for (const layer of layers) {
      if (!layer.match(path)) continue;
      result.path.push(layer);
      if (layer.methods.length === 0 || layer.methods.includes(verb)) {
        result.pathAndMethod.push(layer);
        if (layer.methods.length > 0) result.route = true;
      }
    }
    return result;
  };
  return router;
}

/**
 * Whether `method path` reaches one layer only in the Koa chain: none of `others` (the routers
 * in front of `owner`, and any others that must not see it) matches it, and `owner` matches it
 * with exactly one layer, whose template is `route` (no router middleware on the way). What the fast paths answer before Koa must be such
 * a route, or they would skip something Koa runs (api/videos/fast.ts, api/analytics/fast.ts).
 */
export function reachesOnly(others: Router[], owner: Router, method: string, path: string, route: string): boolean {
  if (others.some((r) => r.match(path, method).pathAndMethod.length > 0)) return false;
  const layers = owner.match(path, method).pathAndMethod;
  return layers.length === 1 && layers[0].path === route;
}
