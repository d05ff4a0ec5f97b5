import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { videoPublicId } from '../../lib/ids';
import { exceededAllowance } from '../../lib/playback/bandwidth';
import { signPlaybackToken } from '../../lib/playback/tokens';
import { cdnUrl, mountPath } from '../../lib/playback/urls';
import { SDK_FILE } from '../analytics/sdk';
import { frameAncestors } from '../../lib/protection/domains';
import { viewerRefusal } from '../../lib/protection/enforce';
import { type Restriction, selfOriginsOf } from '../../lib/protection/restriction';
import { viewerOf } from '../cdn/protected';
import { liveEmbed } from '../../lib/live/embed';
import type { Deps } from '../deps';
import { type PageInput, type PageState, renderPage } from './page';
import { ROOT } from '../../lib/root';

interface Asset {
  body: Buffer;
  type: string;
  version: string;
}

function asset(file: string | string[], type: string, version?: string): Asset {
  const body = Buffer.concat([file].flat().map((f) => fs.readFileSync(f)));
  return { body, type, version: version ?? createHash('sha256').update(body).digest('hex').slice(0, 12) };
}

const STATUS: Record<PageState, number> = { ready: 200, processing: 200, failed: 200, unavailable: 403, not_found: 404, forbidden: 403, restricted: 403, off_air: 200 };

/** Seconds an embed page's own token for an encrypted public video lives (a long film, paused). */
const EMBED_TOKEN_TTL = 6 * 3600;

function flag(value: unknown, fallback: boolean): boolean {
  const v = Array.isArray(value) ? value[0] : value;
  if (typeof v !== 'string') return fallback;
  return ['1', 'true', 'yes', ''].includes(v.toLowerCase());
}

/**
 * `{player_url}/embed/<video_id>[?token=]` and its assets. hls.js comes from the project's own
 * npm dependency, so a page never loads code from a third-party CDN.
 */
export function playerRoutes(r: Router, deps: Deps): void {
  const prefix = mountPath(deps.config.playerUrl);
  const assets: Record<string, Asset> = {
    'hls.min.js': asset(require.resolve('hls.js/dist/hls.min.js'), 'application/javascript; charset=utf-8', require('hls.js/package.json').version),
    // The analytics sender (SPEC §18, sdk/analytics.js) ships in the same file as the player.
    'embed.js': asset([SDK_FILE, path.join(ROOT, 'api', 'player', 'embed.js')], 'application/javascript; charset=utf-8'),
    'embed.css': asset(path.join(ROOT, 'api', 'player', 'embed.css'), 'text/css; charset=utf-8'),
  };
  const assetUrl = (name: string) => `${prefix}/assets/${name}?v=${assets[name].version}`;
  const cdnOrigin = new URL(deps.config.cdnUrl).origin;
  const beaconsUrl = `${deps.config.publicBaseUrl}/v1/beacons`;
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' ${cdnOrigin} data:`,
    // data: for hls.js's caption tracks (<track src="data:,WEBVTT">, cues added from script).
    `media-src 'self' ${cdnOrigin} blob: data:`,
    // The beacon origin ({base_url}) for the analytics sender bundled into embed.js.
    `connect-src 'self' ${cdnOrigin} ${new URL(beaconsUrl).origin}`,
    "worker-src 'self' blob:",
    "base-uri 'none'",
    "form-action 'none'",
    // No frame-ancestors for unrestricted videos: embedding anywhere is the point, and `*` would
    // refuse file:// parents. A restricted video's page adds one from its allow-list (SPEC §20).
  ].join('; ');
  const self = selfOriginsOf(deps.config);

  const page = (ctx: ParameterizedContext, state: PageState, title: string, media?: PageInput['media'], restriction?: Restriction | null, minted = false) => {
    ctx.status = STATUS[state];
    ctx.type = 'text/html; charset=utf-8';
    // The browser refuses to show the page in a frame on any other site, even when the parent
    // strips the Referer (which the server-side check below cannot see through).
    ctx.set('Content-Security-Policy', restriction ? `${csp}; frame-ancestors ${frameAncestors(restriction.rules, [...self])}` : csp);
    if (restriction) ctx.set('Vary', 'Referer');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'strict-origin');
    // Token pages and restricted pages (judged on this request's Referer) are never shared.
    ctx.set('Cache-Control', ctx.query.token || restriction || minted ? 'private, no-store' : 'no-cache');
    ctx.body = renderPage({ state, title, media, assets: { css: assetUrl('embed.css'), hls: assetUrl('hls.min.js'), js: assetUrl('embed.js') } });
  };

  r.get(`${prefix}/assets/:name`, (ctx) => {
    const a = Object.hasOwn(assets, ctx.params.name) ? assets[ctx.params.name] : undefined;
    if (!a) return page(ctx, 'not_found', 'Not found');
    ctx.type = a.type;
    ctx.set('X-Content-Type-Options', 'nosniff');
    // URLs carry the content version, so a changed file is a new URL.
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.body = a.body;
  });

  r.get(`${prefix}/embed/:id`, async (ctx) => {
    const tokenParam = Array.isArray(ctx.query.token) ? ctx.query.token[0] : ctx.query.token;
    const token = tokenParam || undefined;
    if (ctx.params.id.startsWith('ls_')) {
      // A live stream (SPEC §17): live with a badge while on air, then its recording.
      const l = await liveEmbed(deps.db, deps.config, ctx.params.id);
      if (l.kind === 'not_found' || l.kind === 'forbidden') return page(ctx, l.kind, l.kind === 'forbidden' ? 'Private live stream' : 'Live stream not found');
      // SPEC §20: the stream's restriction, checked and turned into frame-ancestors like a video's.
      if (viewerRefusal(l, null, viewerOf(ctx), self)) return page(ctx, 'restricted', l.title, undefined, l.restriction);
      if (l.kind === 'off_air') return page(ctx, 'off_air', l.title, undefined, l.restriction);
      const autoplayLive = flag(ctx.query.autoplay, l.live);
      const media = { src: l.src, poster: l.poster, autoplay: autoplayLive, muted: flag(ctx.query.muted, autoplayLive), loop: false, live: l.live };
      // Viewer analytics (SPEC §18): on air the beacons name the live stream (concurrent viewers), after it the recording.
      return page(ctx, 'ready', l.title, { ...media, analytics: { subject: l.subject, beacons: beaconsUrl } }, l.restriction, l.minted);
    }
    const access = await deps.hot.access.resolve({ id: ctx.params.id, token });
    if (access.kind !== 'ok') return page(ctx, access.kind, access.kind === 'forbidden' ? 'Private video' : 'Video not found');
    const { video, grant } = access;
    const r = video.restriction;
    // SPEC §20: the embedding page (the iframe request's Referer, else Origin) against the allow-list.
    if (viewerRefusal(video, grant, viewerOf(ctx), self)) return page(ctx, 'restricted', video.title, undefined, r);
    if (video.status === 'failed') return page(ctx, 'failed', video.title, undefined, r);
    if (video.status !== 'ready') return page(ctx, 'processing', video.title, undefined, r);
    // The CDN would refuse every file; say why instead of showing a player that cannot start.
    if (exceededAllowance(video.plan, video.bandwidth_bytes) !== undefined) return page(ctx, 'unavailable', video.title, undefined, r);
    let subject = grant ? token! : videoPublicId(video.id);
    // An encrypted video's key is given only to a token: a page that may play it by id gets a
    // short one of its own (the page itself passed the restriction).
    const minted = !grant && video.encryption === 'aes-128';
    if (minted) subject = (await signPlaybackToken(deps.config.playback, video.id, EMBED_TOKEN_TTL)).token;
    const autoplay = flag(ctx.query.autoplay, false);
    page(ctx, 'ready', video.title, {
      src: cdnUrl(deps.config, subject, 'master.m3u8'),
      poster: cdnUrl(deps.config, subject, 'thumbnail.jpg'),
      autoplay,
      // Browsers only autoplay muted video, so autoplay implies muted unless asked otherwise.
      muted: flag(ctx.query.muted, autoplay),
      loop: flag(ctx.query.loop, false),
      // Seek previews (SPEC §14) once the storyboard exists: the player never asks for a missing one.
      storyboard: video.storyboard_ready ? `${deps.config.cdnUrl}/v/${subject}/storyboard.vtt` : undefined,
      // Viewer analytics: the beacon names the same subject the page plays (a private video's token).
      analytics: { subject, beacons: beaconsUrl },
      audioOnly: video.audio_layout === 'audio_only',
    }, r, minted);
  });

  r.get(`${prefix}/*rest`, (ctx) => page(ctx, 'not_found', 'Not found'));
}
