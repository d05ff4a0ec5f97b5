import type { Db } from '../db';
import type { Storage } from '../storage';
import { outputKeys } from './keys';

/**
 * On-demand images are files the workspace stores (issue 22 item 8): their bytes go into
 * `videos.derived_bytes`, which the storage counter adds to the video's size, and a video keeps at
 * most `capBytes` of them. A file that would pass the cap first evicts the video's derived folder
 * (every cached image of it; they are re-rendered on demand), which is one prefix delete rather
 * than an LRU index. A request already streaming an evicted file keeps its open stream; one about
 * to open it gets a 404, and the next request renders it again.
 */
export async function recordDerived(db: Db, storage: Storage, video: { workspaceId: string; id: string }, bytes: number, capBytes: number, put: () => Promise<void>): Promise<void> {
  const row = await db('videos').where({ id: video.id }).first('derived_bytes');
  if (row && Number(row.derived_bytes) + bytes > capBytes) {
    await storage.deletePrefix(outputKeys.derived(video.workspaceId, video.id, ''));
    await db('videos').where({ id: video.id }).update({ derived_bytes: 0 });
  }
  await put();
  await db('videos').where({ id: video.id }).increment('derived_bytes', bytes);
}
