import type { ParameterizedContext } from 'koa';
import { videoPublicId } from '../../lib/ids';
import { signPlaybackToken, type PlaybackClaims } from '../../lib/playback/tokens';
import type { Deps } from '../deps';
import { conflict, notFound } from '../errors';
import { auth } from '../middleware/auth';

/**
 * `GET /v1/playback/{ls_id}` (SPEC §17, §20): a token for the broadcast going on now. Its subject
 * is the broadcast's recording (what `/cdn/live/<token>/…` resolves, and what the key of an
 * encrypted broadcast belongs to), so it serves this broadcast's live window and then its finished
 * recording on `/v/` — never a later broadcast of the stream. Its claims (`ip`, `max_resolution`)
 * hold on every live playlist, segment and key. 409 `not_live` when no broadcast is going on.
 */
export async function liveStreamPlayback(ctx: ParameterizedContext, deps: Deps, lsId: string, ttl: number, claims: PlaybackClaims) {
  const ls = await deps.db('live_streams').where({ id: lsId, workspace_id: auth(ctx).workspaceId }).whereNull('deleted_at').first('active_video_id');
  if (!ls) throw notFound('Live stream');
  if (!ls.active_video_id) throw conflict('not_live', 'The live stream has no broadcast going on; a token names one broadcast');
  const { token, expiresAt } = await signPlaybackToken(deps.config.playback, ls.active_video_id, ttl, Date.now(), claims);
  const { config } = deps;
  return {
    video_id: videoPublicId(ls.active_video_id),
    hls_url: `${config.cdnUrl}/live/${token}/master.m3u8`,
    thumbnail_url: `${config.cdnUrl}/v/${token}/thumbnail.jpg`,
    // The stream's own embed page: it plays by id (and mints its own key token); it takes no token.
    embed_url: `${config.playerUrl}/embed/${lsId}`,
    token,
    expires_at: expiresAt.toISOString(),
  };
}
