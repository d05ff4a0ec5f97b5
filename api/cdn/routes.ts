import { pipeline } from 'node:stream/promises';
import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { exceededAllowance } from '../../lib/playback/bandwidth';
import type { CachedFile } from '../../lib/playback/fileCache';
import { mountPath } from '../../lib/playback/urls';
import type { ByteRange } from '../../lib/storage';
import type { Deps } from '../deps';
import { ApiError, forbidden, notFound } from '../errors';
import { encryptedSegment, restrictedCacheControl, rungRefusal, viewerRefusal } from '../../lib/protection/enforce';
import { encryptedEtag } from '../../lib/protection/hls';
import { videoContentKey } from '../../lib/protection/keys';
import { selfOriginsOf } from '../../lib/protection/restriction';
import { CDN_EXPOSE_HEADERS, cacheControl, etagMatches, parseCdnPath } from './files';
import { liveCdnRoutes } from './live';
import { outputCdnRoutes } from './outputs/routes';
import { parseRange } from './range';
import { answerKey, playlistRewrite, readWhole, viewerOf } from './protected';

function cors(ctx: ParameterizedContext): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Expose-Headers', CDN_EXPOSE_HEADERS);
}

function unsatisfiable(size: number): ApiError {
  return new ApiError(416, 'range_not_satisfiable', `The range is outside the file's ${size} bytes`, undefined, { 'Content-Range': `bytes */${size}` });
}

/**
 * The same answers as from storage (304, HEAD, 206, 200), from a file held in memory. Returns the
 * body bytes it sends, for the bandwidth meter.
 */
function answerFromMemory(
  ctx: ParameterizedContext,
  file: CachedFile,
  o: { rangeHeader: string; ifNoneMatch: string; found: (etag: string | undefined) => void },
): number {
  o.found(file.etag);
  if (o.ifNoneMatch && file.etag && etagMatches(o.ifNoneMatch, file.etag)) {
    ctx.status = 304;
    return 0;
  }
  const size = file.body.length;
  if (ctx.method === 'HEAD') {
    ctx.status = 200;
    ctx.length = size;
    return 0;
  }
  const want = parseRange(o.rangeHeader, size);
  if (want.kind === 'unsatisfiable') throw unsatisfiable(size);
  if (want.kind === 'range') {
    ctx.status = 206;
    ctx.set('Content-Range', `bytes ${want.start}-${want.end}/${size}`);
    ctx.body = file.body.subarray(want.start, want.end + 1);
  } else {
    ctx.status = 200;
    ctx.body = file.body;
  }
  return (ctx.body as Buffer).length;
}

/**
 * `{cdn_url}/v/<vid_id | uuid | token>/<file>` (SPEC §7): key-less, streamed from storage, with
 * Range, CORS and caching a CDN in front can honour. Free workspaces stop at their bandwidth.
 */
export function cdnRoutes(r: Router, deps: Deps): void {
  const base = `${mountPath(deps.config.cdnUrl)}/v/`;
  const { meter, access: decisions, files } = deps.hot;
  const self = selfOriginsOf(deps.config);
  // SPEC §14 files (captions, downloads, storyboard, images) first; the rest falls through.
  outputCdnRoutes(r, deps, meter);
  // SPEC §17 live playlists and segments.
  liveCdnRoutes(r, deps);

  r.options(`${base}*rest`, (ctx) => {
    cors(ctx);
    ctx.set('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', 'Range, If-None-Match');
    ctx.set('Access-Control-Max-Age', '86400');
    ctx.status = 204;
  });

  r.get(`${base}*rest`, async (ctx) => {
    cors(ctx);
    ctx.set('Cache-Control', 'no-store');
    // ctx.path is still percent-encoded: an encoded slash or dot never matches the grammar.
    const parsed = parseCdnPath(ctx.path.slice(base.length));
    if (!parsed) throw notFound('File');
    const access = await decisions.resolve(parsed.isId ? { id: parsed.subject } : { token: parsed.subject });
    if (access.kind === 'not_found') throw notFound('Video');
    if (access.kind === 'forbidden') throw forbidden('forbidden', 'This video needs a valid playback token (GET /playback/{id})');
    const { video, grant } = access;
    if (video.status !== 'ready') throw notFound('Video');
    // SPEC §20, on every request: the cached decision carries the restriction, not a verdict.
    const refused = viewerRefusal(video, grant, viewerOf(ctx), self);
    if (refused) throw forbidden('playback_restricted', refused);
    if (parsed.file === 'key') return answerKey(ctx, deps, video, grant);
    const file = parsed.file;
    if (file.rung) {
      const capped = rungRefusal(video, grant, file.rung);
      if (capped) throw forbidden('playback_restricted', capped);
    }

    const allowance = exceededAllowance(video.plan, video.bandwidth_bytes + meter.pending(video.workspace_id, video.month));
    if (allowance !== undefined) {
      throw forbidden('bandwidth_quota_exceeded', `The workspace has used its ${video.plan} plan's monthly bandwidth of ${allowance} bytes`);
    }

    const key = file.key(video.workspace_id, video.id);
    const encrypted = video.encryption === 'aes-128';
    const found = (etag: string | undefined) => {
      ctx.set('Accept-Ranges', 'bytes');
      ctx.set('Cache-Control', restrictedCacheControl(video, cacheControl(file.kind, { growing: video.growing, tokenExpiresAt: grant?.expiresAt ?? null })));
      if (etag) ctx.set('ETag', etag);
      ctx.type = file.contentType;
    };
    const rangeHeader = ctx.get('range');
    const ifNoneMatch = ctx.get('if-none-match');
    const memo = { rangeHeader, ifNoneMatch, found };
    // Playlists a token's claims or the encryption rewrite, and encrypted segments: whole bytes, then the same answers.
    const rewrite = file.kind === 'playlist' ? playlistRewrite(deps, video, grant, file, parsed.subject) : undefined;
    if (rewrite || (encrypted && file.kind === 'segment')) {
      const cachedFile = await files.get(video.id, key);
      const plain = cachedFile ?? (await readWhole(deps, key));
      if (!plain) throw notFound('File');
      let out: CachedFile;
      if (rewrite) out = { body: Buffer.from(await rewrite(plain.body.toString('utf8'))), etag: undefined };
      else {
        const contentKey = await videoContentKey(deps.db, deps.config.protection, video.id);
        out = { body: encryptedSegment(contentKey, file.rung!, file.name!, plain.body, cachedFile !== null), etag: encryptedEtag(plain.etag) };
      }
      const answered = answerFromMemory(ctx, out, memo);
      if (answered > 0) ctx.res.once('finish', () => meter.record(video.workspace_id, video.month, answered));
      return;
    }
    // A small file already in memory (lib/playback/fileCache.ts) answers without storage.
    const cached = await files.get(video.id, key);
    if (cached) {
      const answered = answerFromMemory(ctx, cached, memo);
      if (answered > 0) ctx.res.once('finish', () => meter.record(video.workspace_id, video.month, answered));
      return;
    }
    let range: ByteRange | undefined;
    // Plain GETs go straight to the stream; only conditional, ranged and HEAD requests stat first.
    if (rangeHeader || ifNoneMatch || ctx.method === 'HEAD') {
      const info = await deps.storage.head(key);
      if (!info) throw notFound('File');
      if (ifNoneMatch && info.etag && etagMatches(ifNoneMatch, info.etag)) {
        found(info.etag);
        ctx.status = 304;
        return;
      }
      if (ctx.method === 'HEAD') {
        found(info.etag);
        ctx.status = 200;
        ctx.length = info.size;
        return;
      }
      const want = parseRange(rangeHeader, info.size);
      if (want.kind === 'unsatisfiable') throw unsatisfiable(info.size);
      if (want.kind === 'range') range = want;
    }
    const object = await deps.storage.get(key, range);
    if (!object) throw notFound('File');
    found(object.etag);
    if (range) {
      ctx.status = 206;
      ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${object.size}`);
    } else {
      ctx.status = 200;
    }
    ctx.length = range ? range.end - range.start + 1 : object.size;
    // Players abort downloads all the time (seeks, quality switches). Koa would log each one as
    // an error, so the body is piped here, and only the bytes that left storage are counted.
    ctx.respond = false;
    let sent = 0;
    object.body.on('data', (chunk: Buffer) => (sent += chunk.length));
    try {
      await pipeline(object.body, ctx.res);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') ctx.state.log?.warn({ err, key }, 'CDN stream failed');
    } finally {
      meter.record(video.workspace_id, video.month, sent);
    }
  });
}
