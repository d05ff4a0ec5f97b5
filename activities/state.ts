import type { RenditionState, VideoStatus } from '../workflows/video/defs';
import type { ActivityDeps } from './deps';

/** Postgres is the read model; every write here is idempotent (plain updates/upserts by key). */
export function stateActivities({ db, storage }: ActivityDeps) {
  return {
    async recordState(p: {
      videoId: string;
      status?: VideoStatus;
      progress?: number;
      errorCode?: string | null;
      errorMessage?: string | null;
      markReady?: boolean;
    }): Promise<void> {
      const patch: Record<string, unknown> = { updated_at: db.fn.now() };
      if (p.status) patch.status = p.status;
      if (p.progress !== undefined) patch.progress = p.progress;
      if (p.errorCode !== undefined) patch.error_code = p.errorCode;
      if (p.errorMessage !== undefined) patch.error_message = p.errorMessage;
      if (p.markReady) patch.ready_at = db.raw('coalesce(ready_at, now())');
      if (p.markReady) patch.thumbnail_ready = true;
      await db('videos').where({ id: p.videoId }).update(patch);
    },

    async recordMetadata(p: {
      videoId: string;
      durationSeconds: number | null;
      width: number;
      height: number;
      sizeBytes: number | null;
      renditions: RenditionState[];
    }): Promise<void> {
      await db.transaction(async (tx) => {
        const patch: Record<string, unknown> = { duration_seconds: p.durationSeconds, width: p.width, height: p.height, updated_at: tx.fn.now() };
        if (p.sizeBytes !== null) patch.size_bytes = p.sizeBytes;
        await tx('videos').where({ id: p.videoId }).update(patch);
        await tx('renditions').where({ video_id: p.videoId }).delete();
        if (p.renditions.length) {
          await tx('renditions').insert(
            p.renditions.map((r, i) => ({
              video_id: p.videoId,
              name: r.name,
              ordinal: i,
              width: r.width,
              height: r.height,
              bitrate: r.bitrate,
              status: r.status,
              progress: r.progress,
            })),
          );
        }
      });
    },

    async recordRendition(p: { videoId: string; name: string; status: RenditionState['status']; progress: number }): Promise<void> {
      await db('renditions')
        .where({ video_id: p.videoId, name: p.name })
        .update({ status: p.status, progress: p.progress, updated_at: db.fn.now() });
    },

    async originalExists(p: { storageKey: string }): Promise<boolean> {
      return (await storage.head(p.storageKey)) !== null;
    },

    /** The last step of a deletion: the row (and, by cascade, renditions and tags) goes. */
    async purgeVideo(p: { videoId: string }): Promise<void> {
      await db('videos').where({ id: p.videoId }).delete();
    },
  };
}
