import type Router from '@koa/router';
import { parseId, videoPublicId } from '../../lib/ids';
import { signPlaybackToken } from '../../lib/playback/tokens';
import { cdnUrl } from '../../lib/playback/urls';
import type { Deps } from '../deps';
import { badRequest, conflict } from '../errors';
import { parseQuery } from '../middleware/validate';
import { assertRestrictionOf } from '../restrictions/routes';
import { findVideo } from '../videos/find';
import { liveStreamPlayback } from './live';
import { playbackQuery } from './schema';

/** SPEC §7: signed playback URLs; the token is a path segment so relative playlist URIs carry it. */
export function playbackRoutes(r: Router, deps: Deps): void {
  r.get('/playback/:id', async (ctx) => {
    const q = parseQuery(ctx, playbackQuery);
    const lsId = parseId('ls', ctx.params.id);
    if (lsId) {
      // The live routes apply the stream's restriction; a token's own is not honoured there yet.
      if (q.playback_restriction_id) throw badRequest('invalid_parameters', 'playback_restriction_id is not supported for a live stream token');
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await liveStreamPlayback(ctx, deps, lsId, q.ttl, { ip: q.ip, max_resolution: q.max_resolution, download: q.download });
      return;
    }
    const video = await findVideo(ctx, deps, ctx.params.id);
    const restrictionId = q.playback_restriction_id
      ? await assertRestrictionOf(deps.db, video.workspace_id, q.playback_restriction_id, 'playback_restriction_id')
      : undefined;
    if (video.status !== 'ready') {
      throw conflict('not_ready', `The video is not playable yet (status: ${video.status})`, { status: video.status });
    }
    const { token, expiresAt } = await signPlaybackToken(deps.config.playback, video.id, q.ttl, Date.now(), {
      ip: q.ip,
      max_resolution: q.max_resolution,
      download: q.download,
      playback_restriction_id: restrictionId,
    });
    const publicId = videoPublicId(video.id);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      video_id: publicId,
      hls_url: cdnUrl(deps.config, token, 'master.m3u8'),
      thumbnail_url: cdnUrl(deps.config, token, 'thumbnail.jpg'),
      embed_url: `${deps.config.playerUrl}/embed/${publicId}?token=${token}`,
      token,
      expires_at: expiresAt.toISOString(),
    };
  });
}
