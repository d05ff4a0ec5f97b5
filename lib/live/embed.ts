import type { Config } from '../config';
import type { Db } from '../db';
import { parseId, videoPublicId } from '../ids';
import { signPlaybackToken } from '../playback/tokens';
import type { Restriction } from '../protection/restriction';
import { liveHlsUrl } from './read';
import { liveRestriction, liveRestrictionColumn } from './restriction';

/**
 * `restriction`: the stream's in force (SPEC §20), which the page checks and turns into its CSP.
 * `subject`: what the page's analytics beacons name (SPEC §18): the live stream while on air, the recording after.
 */
export type LiveEmbed =
  | { kind: 'not_found' }
  | { kind: 'forbidden' }
  | { kind: 'off_air'; title: string; restriction: Restriction | null }
  | { kind: 'play'; title: string; src: string; poster: string; live: boolean; restriction: Restriction | null; minted?: boolean; subject: string };

/** Seconds the live embed page's own token lives (a long broadcast watched from the start). */
const LIVE_EMBED_TOKEN_TTL = 12 * 3600;

/**
 * What `{player_url}/embed/<ls_id>` shows (SPEC §17): the live ladder while a broadcast is
 * playable, else the last recording once it is ready, else "not on air" (the page looks again).
 */
export async function liveEmbed(db: Db, config: Config, id: string): Promise<LiveEmbed> {
  const lid = parseId('ls', id);
  const ls = lid
    ? await db('live_streams as l').where('l.id', lid).whereNull('l.deleted_at').first(
        'l.id', 'l.title', 'l.visibility', 'l.status', 'l.active_video_id', liveRestrictionColumn(db),
        db.raw(`(select v.encryption from videos v where v.id = l.active_video_id) as encryption`),
      )
    : undefined;
  if (!ls) return { kind: 'not_found' };
  if (ls.visibility === 'private') return { kind: 'forbidden' };
  const title = ls.title || 'Live';
  const restriction = liveRestriction(ls.restriction);
  if (ls.status === 'active' && ls.active_video_id) {
    // An encrypted broadcast's key goes only to a token: the page (which passed the restriction)
    // gets one of its own for the recording, as a video's embed page does.
    const src = ls.encryption === 'aes-128'
      ? `${config.cdnUrl}/live/${(await signPlaybackToken(config.playback, ls.active_video_id, LIVE_EMBED_TOKEN_TTL)).token}/master.m3u8`
      : liveHlsUrl(config, ls.id);
    return { kind: 'play', title, src, poster: '', live: true, restriction, minted: src !== liveHlsUrl(config, ls.id), subject: ls.id };
  }
  const last = await db('videos').where({ live_stream_id: ls.id, status: 'ready' }).whereNull('deleted_at').whereNot({ visibility: 'private' }).orderBy('created_at', 'desc').first('id', 'encryption');
  if (!last) return { kind: 'off_air', title, restriction };
  const vid = videoPublicId(last.id);
  // An encrypted recording's key and pictures go only to a token (docs/protection.md): the page mints one, as a video's does.
  const minted = last.encryption === 'aes-128';
  const subject = minted ? (await signPlaybackToken(config.playback, last.id, LIVE_EMBED_TOKEN_TTL)).token : vid;
  return { kind: 'play', title, src: `${config.cdnUrl}/v/${subject}/master.m3u8`, poster: `${config.cdnUrl}/v/${subject}/thumbnail.jpg`, live: false, restriction, minted, subject: vid };
}
