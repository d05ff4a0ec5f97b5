import type Router from '@koa/router';
import type { Next, ParameterizedContext } from 'koa';
import { createMediaTools } from '../../../lib/media/tools';
import { outputKeys } from '../../../lib/outputs/keys';
import { type BandwidthMeter, exceededAllowance } from '../../../lib/playback/bandwidth';
import { mountPath } from '../../../lib/playback/urls';
import { loadVideoRow } from '../../../lib/videos/read';
import type { Deps } from '../../deps';
import { forbidden, notFound } from '../../errors';
import { downloadRefusal, restrictedCacheControl, viewerRefusal } from '../../../lib/protection/enforce';
import { downloadCapRefusal, encryptedFramesRefusal } from '../../../lib/protection/images';
import { selfOriginsOf } from '../../../lib/protection/restriction';
import { cacheControl } from '../files';
import { viewerOf } from '../protected';
import { renderImage } from './images';
import { createImageRenderer } from '../../../lib/outputs/images';
import { apiKeyAuth } from '../../middleware/auth';
import { parseOutputPath } from './paths';
import { serveObject } from './serve';
import type { JitCutter } from '../../../lib/playback/jit';
import { RenderRefused } from '../../../lib/outputs/renderQueue';

/**
 * SPEC §14 files on the CDN: caption tracks, static downloads, the storyboard and on-demand
 * images, under the same id-or-token rules as the HLS files (§7). Anything else falls through to
 * the HLS route (`thumbnail.jpg` without a query is the pipeline's poster).
 */
export function outputCdnRoutes(r: Router, deps: Deps, meter: BandwidthMeter, jit?: JitCutter): void {
  const base = `${mountPath(deps.config.cdnUrl)}/v/`;
  // Until a just-in-time rendition is cut through, its segments are cut for the image that needs them.
  // A cut that failed is this render's failure (negative-cached like any); a full queue or a timeout stays a retry-later.
  const ensureSegment = jit
    ? async (ws: string, vid: string, rung: string, name: string) => {
        try {
          return (await jit.ensure(ws, vid, rung, name)) !== 'none';
        } catch (err) {
          if (err instanceof RenderRefused && err.reason === 'failed') throw new Error(err.message);
          throw err;
        }
      }
    : undefined;
  const renderer = createImageRenderer({ storage: deps.storage, media: createMediaTools(deps.config.media), db: deps.db, limits: deps.config.renders, ensureSegment });
  const self = selfOriginsOf(deps.config);

  r.get(`${base}*rest`, async (ctx: ParameterizedContext, next: Next) => {
    const parsed = parseOutputPath(ctx.path.slice(base.length));
    if (!parsed) return next();
    const poster = parsed.path.kind === 'thumbnail' && parsed.path.ext === 'jpg' && Object.keys(ctx.query).length === 0;
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Access-Control-Expose-Headers', 'Content-Length, Content-Range, Accept-Ranges, ETag, Content-Disposition, Retry-After, X-Render-Cache');
    ctx.set('Cache-Control', 'no-store');

    const access = await deps.hot.access.resolve(parsed.isId ? { id: parsed.subject } : { token: parsed.subject });
    if (access.kind === 'not_found') throw notFound('Video');
    if (access.kind === 'forbidden') throw forbidden('forbidden', 'This video needs a valid playback token (GET /playback/{id})');
    const { video, grant } = access;
    if (video.status !== 'ready') throw notFound('Video');
    const refused = viewerRefusal(video, grant, viewerOf(ctx), self) ?? (parsed.path.kind === 'download' ? downloadRefusal(video, grant) : null);
    if (refused) throw forbidden('playback_restricted', refused);
    // SPEC §20 on pictures (docs/protection.md, "Downloads and images"): an encrypted video's
    // frames need a token, as its key does; a capped token's images are rendered within its cap.
    const frames = parsed.path.kind === 'thumbnail' || parsed.path.kind === 'animated' || (parsed.path.kind === 'storyboard' && parsed.path.ext === 'jpg');
    const hidden = frames ? encryptedFramesRefusal(video, grant) : null;
    if (hidden) throw forbidden('forbidden', hidden);
    // The pipeline's poster is a plain file of the HLS route, unless it must be rendered within a
    // cap (an audio-only video's is its waveform, not a frame: no cap applies).
    if (poster && (grant?.maxResolution === undefined || video.audio_layout === 'audio_only')) return next();
    const allowance = exceededAllowance(video.plan, video.bandwidth_bytes + meter.pending(video.workspace_id, video.month));
    if (allowance !== undefined) {
      throw forbidden('bandwidth_quota_exceeded', `The workspace has used its ${video.plan} plan's monthly bandwidth of ${allowance} bytes`);
    }
    const row = await loadVideoRow(deps.db, video.id);
    if (!row) throw notFound('Video');
    const ws = video.workspace_id;
    const cache = (kind: 'playlist' | 'thumbnail' | 'segment') => restrictedCacheControl(video, cacheControl(kind, { growing: true, tokenExpiresAt: grant?.expiresAt ?? null }));
    const p = parsed.path;

    switch (p.kind) {
      case 'subtitle': {
        // The playlist's segment is the copy with X-TIMESTAMP-MAP (lib/outputs/timestampMap.ts) when there is one.
        const hlsCopy = p.file === 'captions.vtt' && p.hls ? outputKeys.subtitleHlsFile(ws, video.id, p.lang) : null;
        const key = p.file === 'index.m3u8' ? outputKeys.subtitlePlaylist(ws, video.id, p.lang) : hlsCopy && (await deps.storage.head(hlsCopy)) ? hlsCopy : outputKeys.subtitleFile(ws, video.id, p.lang);
        const type = p.file === 'index.m3u8' ? 'application/vnd.apple.mpegurl' : 'text/vtt; charset=utf-8';
        return serveObject(ctx, deps, meter, video, key, { contentType: type, cacheControl: cache('playlist') });
      }
      case 'download': {
        const st = await deps.db('static_renditions').where({ video_id: video.id, name: p.name, status: 'ready' }).first();
        if (!st) throw notFound('Download');
        if (grant?.maxResolution !== undefined) {
          const over = downloadCapRefusal(await deps.db('renditions').where({ video_id: video.id }).select('name', 'width', 'height', 'status'), p.name, grant);
          if (over) throw forbidden('playback_restricted', over);
        }
        const filename = `${row.title.replace(/[^\p{L}\p{N} ._-]/gu, '_').slice(0, 100) || 'video'}-${p.name}`;
        return serveObject(ctx, deps, meter, video, outputKeys.staticFile(ws, video.id, p.name), {
          contentType: p.name.endsWith('.m4a') ? 'audio/mp4' : 'video/mp4',
          cacheControl: cache('thumbnail'),
          disposition: `attachment; filename="${filename.replace(/[^\x20-\x7e]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(filename)}`,
        });
      }
      case 'storyboard': {
        if (!row.storyboard_ready) throw notFound('Storyboard');
        const key = p.ext === 'vtt' ? outputKeys.storyboardVtt(ws, video.id) : outputKeys.storyboardJpg(ws, video.id);
        return serveObject(ctx, deps, meter, video, key, { contentType: p.ext === 'vtt' ? 'text/vtt; charset=utf-8' : 'image/jpeg', cacheControl: cache('thumbnail') });
      }
      case 'thumbnail':
      case 'animated': {
        // A playback token or the workspace's own API key takes the keyed lane: an anonymous
        // burst can never hold every render slot, and budgets apply to anonymous requests only.
        const keyed = !!grant || (await apiKeyAuth(ctx, deps.hot))?.workspaceId === ws;
        const out = await renderImage(deps, renderer, row, p, ctx.query, { lane: keyed ? 'keyed' : 'anonymous', address: ctx.ip }, grant?.maxResolution);
        return serveObject(ctx, deps, meter, video, out.key, { contentType: out.contentType, cacheControl: cache('thumbnail'), headers: { 'X-Render-Cache': out.cache } });
      }
    }
  });
}
