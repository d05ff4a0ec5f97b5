import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpDuration } from '../../lib/metrics/registry';
import { exceededAllowance } from '../../lib/playback/bandwidth';
import { mountPath } from '../../lib/playback/urls';
import { encryptedSegment, restrictedCacheControl, rungRefusal } from '../../lib/protection/enforce';
import { encryptedEtag, isCmafRung } from '../../lib/protection/hls';
import { clientAddressOf, TrustedProxies } from '../../lib/net/proxies';
import { ipMatches } from '../../lib/protection/ip';
import { peekContentKey } from '../../lib/protection/keys';
import { selfOriginsOf, viewerAllowed } from '../../lib/protection/restriction';
import type { Deps } from '../deps';
import { logRequest, newRequestId } from '../middleware/request';
import { CDN_EXPOSE_HEADERS, cacheControl, parseCdnPath, replaceable } from './files';
import { playlistRewrite } from './protected';

/**
 * A plain GET of a segment or a playlist whose access decision and bytes are both already in
 * memory, answered before Koa. Everything else (a miss, a Range, a conditional or HEAD request,
 * any error or refusal, a playlist rewritten per request — a token's `max_resolution` on the
 * master, an encrypted video's playlists — and thumbnails) returns false and takes the Koa route
 * in routes.ts, which also fills the caches this reads.
 *
 * Why: a 430 KB segment costs one socket write either way, but Koa's middleware, router and
 * context around it cost as much again, and segments and playlists are most of an origin's
 * requests (docs/performance.md; playlists since issue 33). The answer is the Koa route's, header
 * for header (test/hot/cdn-fast.test.ts): the request id, CORS, caching, ETag, type and length;
 * and it is counted the same way in the request metrics, the request log and the bandwidth meter.
 */
export function cdnFastPath(deps: Deps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const base = `${mountPath(deps.config.cdnUrl)}/v/`;
  // The Koa route's template: the same label in vidhost_http_request_duration_seconds.
  const route = `${base}*rest`;
  const { meter, access, files } = deps.hot;
  const log = deps.log;
  const self = selfOriginsOf(deps.config);
  const trusted = new TrustedProxies(deps.config.trustedProxies ?? []);

  return (req, res) => {
    const url = req.url ?? '';
    if (req.method !== 'GET' || !url.startsWith(base) || req.headers.range !== undefined || req.headers['if-none-match'] !== undefined) return false;
    const q = url.indexOf('?');
    const parsed = parseCdnPath((q < 0 ? url : url.slice(0, q)).slice(base.length));
    if (!parsed || parsed.file === 'key' || parsed.file.kind === 'thumbnail') return false;
    const seg = parsed.file;
    const decision = access.peek(parsed.isId ? { id: parsed.subject } : { token: parsed.subject });
    if (decision?.kind !== 'ok' || decision.video.status !== 'ready') return false;
    const { video, grant } = decision;
    // SPEC §20 per request, never from the cached decision: the Referer/Origin against the
    // restriction, the rung against the token's cap, the client address (decided as Koa's
    // middleware/client.ts does, TRUSTED_PROXIES) against an `ip` claim. A refusal takes the Koa
    // route, which answers it.
    if (grant?.ip !== undefined && !ipMatches(grant.ip, clientAddressOf(req.socket.remoteAddress, req.headers['x-forwarded-for'], trusted))) return false;
    if (video.restriction && !viewerAllowed(video.restriction, { referer: req.headers.referer, origin: req.headers.origin }, self)) return false;
    if (grant?.maxResolution !== undefined && seg.rung && rungRefusal(video, grant, seg.rung)) return false;
    // A playlist the token's cap or the encryption rewrites per request takes the Koa route; the
    // rest are served as stored, as the Koa route serves them from the same cache.
    if (seg.kind === 'playlist' && playlistRewrite(deps, video, grant, seg, parsed.subject)) return false;
    if (exceededAllowance(video.plan, video.bandwidth_bytes + meter.pending(video.workspace_id, video.month)) !== undefined) return false;
    const plain = files.peek(seg.key(video.workspace_id, video.id));
    if (!plain) return false;
    let file = plain;
    if (video.encryption === 'aes-128') {
      if (seg.kind !== 'segment') return false; // rewritten above; never served as stored
      if (isCmafRung(seg.rung!)) return false; // refused by the Koa route (api/cdn/protected.ts)
      const key = peekContentKey(video.id);
      if (!key) return false;
      file = { body: encryptedSegment(key, seg.rung!, seg.name!, plain.body, true), etag: encryptedEtag(plain.etag) };
    }

    const end = httpDuration.startTimer();
    const started = log.isLevelEnabled('info') ? process.hrtime.bigint() : 0n;
    const requestId = newRequestId();
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', CDN_EXPOSE_HEADERS);
    res.setHeader('Cache-Control', restrictedCacheControl(video, cacheControl(seg.kind, { growing: video.growing, tokenExpiresAt: grant?.expiresAt ?? null, replaceable: replaceable(video, seg) })));
    res.setHeader('Accept-Ranges', 'bytes');
    if (file.etag) res.setHeader('ETag', file.etag);
    res.setHeader('Content-Type', seg.contentType);
    res.setHeader('Content-Length', file.body.length);
    res.statusCode = 200;
    res.once('finish', () => meter.record(video.workspace_id, video.month, file.body.length));
    res.end(file.body);
    end({ method: 'GET', route, status: '200' });
    if (started) logRequest(log.child({ req: requestId }), 'GET', url, 200, started);
    return true;
  };
}
