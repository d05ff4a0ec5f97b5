// Watermark profiles in the db (SPEC §24): the row, its API shape, and the mark a video or live
// stream was made with. Shared by the API (api/watermarks/) and the activities.
import type { Knex } from 'knex';
import type { Position, StoredMark } from '../media/watermark';

export interface WatermarkRow {
  id: string;
  workspace_id: string;
  name: string | null;
  storage_key: string;
  content_type: 'image/png' | 'image/jpeg';
  width: number;
  height: number;
  size_bytes: number;
  position: Position;
  padding: number;
  scale: number;
  opacity: number;
  created_at: Date;
  deleted_at: Date | null;
}

/** Where a profile's image lives: beside nothing a video owns, so deleting a video never takes it. */
export const watermarkKey = (workspaceId: string, id: string, ext: 'png' | 'jpg') => `watermarks/${workspaceId}/${id}.${ext}`;

export const storedMark = (w: WatermarkRow): StoredMark => ({
  key: w.storage_key,
  format: w.content_type === 'image/png' ? 'png' : 'jpeg',
  width: w.width,
  height: w.height,
  position: w.position,
  padding: Number(w.padding),
  scale: Number(w.scale),
  opacity: Number(w.opacity),
});

/** The mark a video was made with (its profile even when since deleted), or null. */
export async function markOfVideo(db: Knex, videoId: string): Promise<StoredMark | null> {
  const row: WatermarkRow | undefined = await db('watermarks').join('videos', 'videos.watermark_id', 'watermarks.id').where('videos.id', videoId).first('watermarks.*');
  return row ? storedMark(row) : null;
}

/** The mark a live stream broadcasts with, or null. */
export async function markOfLiveStream(db: Knex, streamId: string): Promise<StoredMark | null> {
  const row: WatermarkRow | undefined = await db('watermarks').join('live_streams', 'live_streams.watermark_id', 'watermarks.id').where('live_streams.id', streamId).first('watermarks.*');
  return row ? storedMark(row) : null;
}
