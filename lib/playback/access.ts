import type { Config } from '../config';
import type { Db } from '../db';
import { parseVideoId } from '../ids';
import type { VideoRow } from '../videos/read';
import { compileRestriction, type Restriction } from '../protection/restriction';
import { monthOf } from './bandwidth';
import { type PlaybackGrant, verifyPlaybackToken } from './tokens';

/** What the key-less surfaces need to know about a video, in one query. */
export interface PlaybackVideo {
  id: string;
  workspace_id: string;
  visibility: VideoRow['visibility'];
  status: VideoRow['status'];
  title: string;
  error_message: string | null;
  plan: string;
  /** Some rendition is still queued or processing: the master playlist will change. */
  growing: boolean;
  /** The storyboard (seek previews) is published: the player page links it. */
  storyboard_ready: boolean;
  /** SPEC §19: 'audio_only' gets the player's audio layout. */
  audio_layout?: string | null;
  /** Bytes recorded in `bandwidth_usage` for the workspace in `month`. */
  bandwidth_bytes: number;
  month: string;
  /** SPEC §20: `aes-128` segments are encrypted by the CDN with the video's key. */
  encryption: 'none' | 'aes-128';
  /** The restriction in force: the video's own, else the workspace's default (a token's replaces both). */
  restriction: Restriction | null;
  /** The source's short side: the size of a `source` (passthrough) rung. */
  short_side: number | null;
  /**
   * Rungs the master lists while their segments are encoded on request (issue 47): the ladder
   * writes its own segments over those, so until then they are not served as immutable.
   */
  on_request?: string[];
}

interface RestrictionRow {
  id: string;
  allowed_domains: string[];
  allow_no_referrer: boolean;
}

export async function loadPlaybackVideo(db: Db, uuid: string, month = monthOf()): Promise<PlaybackVideo | undefined> {
  const { rows } = await db.raw(
    `select v.id, v.workspace_id, v.visibility, v.status, v.title, v.error_message, v.storyboard_ready, v.audio_layout, w.plan,
            coalesce(v.encryption, 'none') as encryption, least(v.width, v.height) as short_side,
            (select coalesce(json_agg(e->>'name'), '[]'::json) from jsonb_array_elements(coalesce(v.on_request_renditions, '[]'::jsonb)) e) as on_request,
            (select json_build_object('id', pr.id, 'allowed_domains', pr.allowed_domains, 'allow_no_referrer', pr.allow_no_referrer)
               from playback_restrictions pr where pr.id = coalesce(v.playback_restriction_id, w.default_playback_restriction_id)) as restriction,
            exists (select 1 from renditions r where r.video_id = v.id and r.status in ('queued', 'processing')) as growing,
            coalesce((select b.bytes from bandwidth_usage b where b.workspace_id = v.workspace_id and b.month = ?::date), 0) as bandwidth_bytes
       from videos v join workspaces w on w.id = v.workspace_id
      where v.id = ? and v.deleted_at is null`,
    [month, uuid],
  );
  const r = rows[0];
  if (!r) return undefined;
  return { ...r, bandwidth_bytes: Number(r.bandwidth_bytes), month, restriction: r.restriction ? compileRestriction(r.restriction as RestrictionRow) : null };
}

async function loadRestriction(db: Db, id: string, workspaceId: string): Promise<Restriction | null> {
  const row: RestrictionRow | undefined = await db('playback_restrictions').where({ id, workspace_id: workspaceId }).first('id', 'allowed_domains', 'allow_no_referrer');
  return row ? compileRestriction(row) : null;
}

export type PlaybackAccess =
  | { kind: 'ok'; video: PlaybackVideo; grant: PlaybackGrant | null }
  | { kind: 'not_found' }
  | { kind: 'forbidden' };

/**
 * SPEC §3/§7: public and unlisted videos play by id; private ones only with a token whose `sub`
 * is that video. With `id` (player pages) a token for another video is no grant; with a token
 * alone (CDN token paths) the token names the video.
 */
export async function resolvePlayback(db: Db, playback: Config['playback'], ref: { id?: string; token?: string }): Promise<PlaybackAccess> {
  let grant = ref.token ? await verifyPlaybackToken(playback, ref.token) : null;
  let uuid: string | null;
  if (ref.id !== undefined) {
    uuid = parseVideoId(ref.id);
    if (!uuid) return { kind: 'not_found' };
    if (grant && grant.videoUuid !== uuid) grant = null;
  } else {
    if (!grant) return { kind: 'forbidden' };
    uuid = grant.videoUuid;
  }
  const video = await loadPlaybackVideo(db, uuid);
  if (!video) return { kind: 'not_found' };
  if (video.visibility === 'private' && !grant) return { kind: 'forbidden' };
  if (grant?.restrictionId) {
    // A token naming a restriction that is gone (or another workspace's) grants nothing.
    const restriction = await loadRestriction(db, grant.restrictionId, video.workspace_id);
    if (!restriction) return { kind: 'forbidden' };
    return { kind: 'ok', video: { ...video, restriction }, grant };
  }
  return { kind: 'ok', video, grant };
}
