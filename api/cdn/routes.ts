import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { exceededAllowance } from '../../lib/playback/bandwidth';
import type { CachedFile } from '../../lib/playback/fileCache';
import { mountPath } from '../../lib/playback/urls';
import type { Deps } from '../deps';
import { conflict, forbidden, notFound } from '../errors';
import { encryptedSegment, restrictedCacheControl, rungRefusal, viewerRefusal } from '../../lib/protection/enforce';
import { encryptedEtag } from '../../lib/protection/hls';
import { videoContentKey } from '../../lib/protection/keys';
import { selfOriginsOf } from '../../lib/protection/restriction';
import { CDN_EXPOSE_HEADERS, cacheControl, parseCdnPath, replaceable } from './files';
import { liveCdnRoutes } from './live';
import { realtimeCdnRoutes } from './realtime';
import { outputCdnRoutes } from './outputs/routes';
import { answerKey, cmafRefusal, playlistRewrite, readWhole, viewerOf } from './protected';
import { answerFromMemory, streamObject } from './stream';
import { createJitCutter, type JitCutter } from '../../lib/playback/jit';
import { createMediaTools } from '../../lib/media/tools';
import { RenderRefused } from '../../lib/outputs/renderQueue';
import { refusalError } from './outputs/images';
import { ApiError } from '../errors';
import type { PlaybackVideo } from '../../lib/playback/access';
import type { PlaybackGrant } from '../../lib/playback/tokens';
import { PASSTHROUGH_RENDITION } from '../../lib/outputs/passthrough';

/**
 * SPEC §23: a segment missing from storage whose rendition is just-in-time is cut now (once,
 * bounded: lib/playback/jit.ts). True when it is now stored; a refusal is a 503 with Retry-After.
 */
async function cutIfPlanned(jit: JitCutter, workspaceId: string, videoId: string, rung: string, name: string, viewer: string): Promise<boolean> {
  try {
    return (await jit.ensure(workspaceId, videoId, rung, name, viewer)) !== 'none';
  } catch (err) {
    if (err instanceof RenderRefused) throw refusalError(err);
    throw err;
  }
}

/**
 * A `source` rung that is not the source: before the on-request rungs, a source the passthrough
 * refused played its lowest rung encoded on request under `source/`. A token's `max_resolution`
 * takes it by that rung's size, not the source's (issue 47).
 */
async function encodedWithin(jit: JitCutter, video: PlaybackVideo, grant: PlaybackGrant | null, rung: string): Promise<boolean> {
  if (rung !== PASSTHROUGH_RENDITION || grant?.maxResolution === undefined) return false;
  const side = await jit.encodedSide(video.workspace_id, video.id, rung);
  return side !== null && side <= grant.maxResolution;
}

const isNotFound = (err: unknown): boolean => err instanceof ApiError && err.status === 404;

function cors(ctx: ParameterizedContext): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Expose-Headers', CDN_EXPOSE_HEADERS);
}

/**
 * `{cdn_url}/v/<vid_id | uuid | token>/<file>` (SPEC §7): key-less, streamed from storage, with
 * Range, CORS and caching a CDN in front can honour. Free workspaces stop at their bandwidth.
 */
export function cdnRoutes(r: Router, deps: Deps): void {
  const base = `${mountPath(deps.config.cdnUrl)}/v/`;
  const { meter, access: decisions, files } = deps.hot;
  const self = selfOriginsOf(deps.config);
  const jit = createJitCutter({ storage: deps.storage, media: createMediaTools(deps.config.media), db: deps.db, limits: deps.config.media.jitCuts, formatCheck: deps.config.media.formatCheck, log: deps.log });
  // SPEC §14 files (captions, downloads, storyboard, images) first; the rest falls through.
  outputCdnRoutes(r, deps, meter, jit);
  // SPEC §17 live playlists and segments; §22 WHIP and WHEP.
  realtimeCdnRoutes(r, deps);
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
      if (capped && !(await encodedWithin(jit, video, grant, file.rung))) throw forbidden('playback_restricted', capped);
    }
    const unencryptable = cmafRefusal(video, file);
    if (unencryptable) throw conflict('encryption_unsupported', unencryptable);

    const allowance = exceededAllowance(video.plan, video.bandwidth_bytes + meter.pending(video.workspace_id, video.month));
    if (allowance !== undefined) {
      throw forbidden('bandwidth_quota_exceeded', `The workspace has used its ${video.plan} plan's monthly bandwidth of ${allowance} bytes`);
    }

    const key = file.key(video.workspace_id, video.id);
    // Whose look-ahead a request moves (lib/playback/jit.ts): this client on this path's subject.
    const viewer = `${viewerOf(ctx).ip ?? ''} ${parsed.subject}`;
    const encrypted = video.encryption === 'aes-128';
    const found = (etag: string | undefined) => {
      ctx.set('Cache-Control', restrictedCacheControl(video, cacheControl(file.kind, { growing: video.growing, tokenExpiresAt: grant?.expiresAt ?? null, replaceable: replaceable(video, file) })));
      if (etag) ctx.set('ETag', etag);
      ctx.type = file.contentType;
    };
    const answer = { found, sent: (bytes: number) => meter.record(video.workspace_id, video.month, bytes) };
    // Playlists a token's claims or the encryption rewrite, and encrypted segments: whole bytes, then the same answers.
    const rewrite = file.kind === 'playlist' ? playlistRewrite(deps, video, grant, file, parsed.subject) : undefined;
    if (rewrite || (encrypted && file.kind === 'segment')) {
      const cachedFile = await files.get(video.id, key);
      let plain = cachedFile ?? (await readWhole(deps, key));
      if (!plain && file.kind === 'segment' && (await cutIfPlanned(jit, video.workspace_id, video.id, file.rung!, file.name!, viewer))) plain = await readWhole(deps, key);
      if (!plain) throw notFound('File');
      let out: CachedFile;
      if (rewrite) out = { body: Buffer.from(await rewrite(plain.body.toString('utf8'))), etag: undefined };
      else {
        const contentKey = await videoContentKey(deps.db, deps.config.protection, video.id);
        out = { body: encryptedSegment(contentKey, file.rung!, file.name!, plain.body, cachedFile !== null), etag: encryptedEtag(plain.etag) };
      }
      return answerFromMemory(ctx, out, answer);
    }
    // A small file already in memory (lib/playback/fileCache.ts) answers without storage.
    const cached = await files.get(video.id, key);
    if (cached) return answerFromMemory(ctx, cached, answer);
    try {
      return await streamObject(ctx, deps.storage, key, answer);
    } catch (err) {
      if (!isNotFound(err) || file.kind !== 'segment' || !(await cutIfPlanned(jit, video.workspace_id, video.id, file.rung!, file.name!, viewer))) throw err;
    }
    return streamObject(ctx, deps.storage, key, answer);
  });
}
