import type { Db } from '../db';
import { PLAYBACK_CHANNEL } from '../playback/accessCache';
import { keys, type Storage } from '../storage';
import type { CaptionRow } from './read';
import { subtitleUri } from './keys';
import { type SubtitleTrack, withSubtitles } from './master';
import { audioUri, type AudioRendition, withAudio } from './audio';
import { cmafAudioRendition } from '../media/cmaf';

const PLAYLIST_TYPE = 'application/vnd.apple.mpegurl';

/**
 * Every write of a video's master playlist runs under this lock (a Postgres advisory lock held
 * by a transaction): the workflow adding a rendition and the API adding a caption each read the
 * other's latest write, so neither can drop what the other just published.
 */
export async function withMasterLock<T>(db: Db, videoId: string, fn: () => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.raw('select pg_advisory_xact_lock(hashtext(?))', [`master:${videoId}`]);
    return fn();
  });
}

export async function subtitleTracks(db: Db, videoId: string): Promise<SubtitleTrack[]> {
  const rows: CaptionRow[] = await db('captions').where({ video_id: videoId, status: 'ready' }).orderBy('language');
  return rows.map((c) => ({ language: c.language, label: c.label, isDefault: c.is_default, uri: subtitleUri(c.language) }));
}

/** A video's ready audio renditions (SPEC §19), in the order the pipeline published them. */
export async function audioRenditions(db: Db, videoId: string): Promise<AudioRendition[]> {
  const rows: Array<{ rendition: string; language: string; name: string; is_default: boolean; channels: number; cmaf: boolean }> = await db('audio_tracks')
    .where({ video_id: videoId, status: 'ready' })
    .orderBy(['ordinal', 'rendition']);
  return rows.map((a) => ({
    language: a.language,
    name: a.name,
    isDefault: a.is_default,
    channels: a.channels,
    uri: audioUri(a.rendition),
    ...(a.cmaf ? { cmafUri: audioUri(cmafAudioRendition(a.rendition)) } : {}),
  }));
}

/**
 * The master as the pipeline built it, plus the audio renditions and captions in Postgres. Call inside withMasterLock.
 * Every API process keeps small CDN files in memory (lib/playback/fileCache.ts): once the new
 * text is in storage, the video's files are announced changed, so none serves the old master.
 * (A row's notification alone could come before this write and be followed by a re-read of the
 * old file.)
 */
export async function writeMaster(db: Db, storage: Storage, p: { workspaceId: string; videoId: string; text: string }): Promise<void> {
  const text = withSubtitles(withAudio(p.text, await audioRenditions(db, p.videoId)), await subtitleTracks(db, p.videoId));
  await storage.put(keys.master(p.workspaceId, p.videoId), text, { contentType: PLAYLIST_TYPE });
  await db.raw('select pg_notify(?, ?)', [PLAYBACK_CHANNEL, `video:${p.videoId}`]);
}

/**
 * Re-applies the captions to the published master, leaving its renditions as they are (a player
 * that reloads it keeps playing). Nothing to do before the first publication: the pipeline's
 * own write will include the captions.
 */
export async function republishMaster(db: Db, storage: Storage, p: { workspaceId: string; videoId: string }): Promise<boolean> {
  return withMasterLock(db, p.videoId, async () => {
    const object = await storage.get(keys.master(p.workspaceId, p.videoId));
    if (!object) return false;
    const chunks: Buffer[] = [];
    for await (const c of object.body) chunks.push(c as Buffer);
    await writeMaster(db, storage, { ...p, text: Buffer.concat(chunks).toString('utf8') });
    return true;
  });
}
