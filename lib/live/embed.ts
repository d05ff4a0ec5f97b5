import type { Config } from '../config';
import type { Db } from '../db';
import { parseId, videoPublicId } from '../ids';
import { liveHlsUrl } from './read';

export type LiveEmbed =
  | { kind: 'not_found' | 'forbidden' }
  | { kind: 'off_air'; title: string }
  | { kind: 'play'; title: string; src: string; poster: string; live: boolean };

/**
 * What `{player_url}/embed/<ls_id>` shows (SPEC §17): the live ladder while a broadcast is
 * playable, else the last recording once it is ready, else "not on air" (the page looks again).
 */
export async function liveEmbed(db: Db, config: Config, id: string): Promise<LiveEmbed> {
  const lid = parseId('ls', id);
  const ls = lid ? await db('live_streams').where({ id: lid }).whereNull('deleted_at').first('id', 'title', 'visibility', 'status', 'active_video_id') : undefined;
  if (!ls) return { kind: 'not_found' };
  if (ls.visibility === 'private') return { kind: 'forbidden' };
  const title = ls.title || 'Live';
  if (ls.status === 'active' && ls.active_video_id) return { kind: 'play', title, src: liveHlsUrl(config, ls.id), poster: '', live: true };
  const last = await db('videos').where({ live_stream_id: ls.id, status: 'ready' }).whereNull('deleted_at').whereNot({ visibility: 'private' }).orderBy('created_at', 'desc').first('id');
  if (!last) return { kind: 'off_air', title };
  const vid = videoPublicId(last.id);
  return { kind: 'play', title, src: `${config.cdnUrl}/v/${vid}/master.m3u8`, poster: `${config.cdnUrl}/v/${vid}/thumbnail.jpg`, live: false };
}
