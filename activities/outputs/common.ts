import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../lib/db';
import { keys, type Storage } from '../../lib/storage';

export interface JobVideo {
  id: string;
  workspace_id: string;
  mp4_support: string;
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  deleted_at: Date | null;
  status: string;
}

export interface ReadyRendition {
  name: string;
  width: number;
  height: number;
  status: string;
}

/** The video and its renditions; `growing` while the ladder is still being encoded. */
export async function loadJobVideo(db: Db, videoId: string): Promise<{ video: JobVideo; renditions: ReadyRendition[]; growing: boolean } | null> {
  const video: JobVideo | undefined = await db('videos').where({ id: videoId }).first();
  if (!video || video.deleted_at) return null;
  const renditions: ReadyRendition[] = await db('renditions').where({ video_id: videoId }).orderBy('ordinal').select('name', 'width', 'height', 'status');
  return { video, renditions, growing: renditions.some((r) => r.status === 'queued' || r.status === 'processing') };
}

/**
 * A job that wrote files of a video deleted meanwhile removes them: the deletion sets
 * `deleted_at` before its workflow removes the prefix, so either that removal comes after
 * these writes or this check sees the deletion.
 */
export async function removeIfDeleted(db: Db, storage: Storage, workspaceId: string, videoId: string): Promise<boolean> {
  const row = await db('videos').where({ id: videoId }).first('deleted_at');
  if (row && !row.deleted_at) return false;
  await storage.deletePrefix(keys.videoPrefix(workspaceId, videoId));
  return true;
}

/** A scratch directory for `fn`, removed afterwards whatever happens; `prefix` names its owner in /tmp. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>, prefix = 'vidhost-out-'): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  try {
    return await fn(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
