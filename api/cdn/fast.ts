import type { IncomingMessage, ServerResponse } from 'node:http';
import { httpDuration } from '../../lib/metrics/registry';
import { exceededAllowance } from '../../lib/playback/bandwidth';
import { mountPath } from '../../lib/playback/urls';
import type { Deps } from '../deps';
import { logRequest, newRequestId } from '../middleware/request';
import { CDN_EXPOSE_HEADERS, cacheControl, parseCdnPath } from './files';

/**
 * A plain GET of a segment whose access decision and bytes are both already in memory, answered
 * before Koa. Everything else (a miss, a Range, a conditional or HEAD request, any error or
 * refusal, playlists and thumbnails) returns false and takes the Koa route in routes.ts, which
 * also fills the caches this reads.
 *
 * Why: a 430 KB segment costs one socket write either way, but Koa's middleware, router and
 * context around it cost as much again, and segments are most of an origin's requests
 * (docs/performance.md). The answer is the Koa route's, header for header (test/hot/cdn-fast.test.ts):
 * the request id, CORS, caching, ETag, type and length; and it is counted the same way in the
 * request metrics, the request log and the bandwidth meter.
 */
export function cdnFastPath(deps: Deps): (req: IncomingMessage, res: ServerResponse) => boolean {
  const base = `${mountPath(deps.config.cdnUrl)}/v/`;
  // The Koa route's template: the same label in vidhost_http_request_duration_seconds.
  const route = `${base}*rest`;
  const { meter, access, files } = deps.hot;
  const log = deps.log;

  return (req, res) => {
    const url = req.url ?? '';
    if (req.method !== 'GET' || !url.startsWith(base) || req.headers.range !== undefined || req.headers['if-none-match'] !== undefined) return false;
    const q = url.indexOf('?');
    const parsed = parseCdnPath((q < 0 ? url : url.slice(0, q)).slice(base.length));
    if (!parsed || parsed.file.kind !== 'segment') return false;
    const decision = access.peek(parsed.isId ? { id: parsed.subject } : { token: parsed.subject });
    if (decision?.kind !== 'ok' || decision.video.status !== 'ready') return false;
    const { video, grant } = decision;
    if (exceededAllowance(video.plan, video.bandwidth_bytes + meter.pending(video.workspace_id, video.month)) !== undefined) return false;
    const file = files.peek(parsed.file.key(video.workspace_id, video.id));
    if (!file) return false;

    const end = httpDuration.startTimer();
    const started = log.isLevelEnabled('info') ? process.hrtime.bigint() : 0n;
    const requestId = newRequestId();
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', CDN_EXPOSE_HEADERS);
    res.setHeader('Cache-Control', cacheControl('segment', { growing: video.growing, tokenExpiresAt: grant?.expiresAt ?? null }));
    res.setHeader('Accept-Ranges', 'bytes');
    if (file.etag) res.setHeader('ETag', file.etag);
    res.setHeader('Content-Type', parsed.file.contentType);
    res.setHeader('Content-Length', file.body.length);
    res.statusCode = 200;
    res.once('finish', () => meter.record(video.workspace_id, video.month, file.body.length));
    res.end(file.body);
    end({ method: 'GET', route, status: '200' });
    if (started) logRequest(log.child({ req: requestId }), 'GET', url, 200, started);
    return true;
  };
}
