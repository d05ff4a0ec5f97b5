import { heartbeat } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { keys, StorageError } from '../../lib/storage';
import { cancelVideoJobs } from '../../lib/videos/jobs';
import type { ActivityDeps } from '../deps';

export function fileActivities({ db, storage, log, temporal }: ActivityDeps) {
  return {
    /** Removes every object of a video; safe to run again after a crash. */
    async deleteVideoFiles(p: { workspaceId: string; videoId: string }): Promise<{ deleted: number }> {
      // A job still writing (an MP4, a storyboard, an alignment, an added track) would leave files
      // behind: each is cancelled, and waited for until it has stopped (SPEC §14, §25).
      await cancelVideoJobs(temporal, db, p.videoId, { waitMs: 120_000 });
      let deleted = 0;
      const prefixes = [keys.uploadsPrefix(p.workspaceId, p.videoId), keys.originalsPrefix(p.workspaceId, p.videoId), keys.videoPrefix(p.workspaceId, p.videoId)];
      for (const prefix of prefixes) {
        heartbeat({ prefix });
        deleted += await storage.deletePrefix(prefix);
      }
      log.info({ videoId: p.videoId, deleted }, 'video files deleted');
      return { deleted };
    },

    /**
     * Makes an upload the video's original, once (SPEC §12): the staging object an upload URL
     * wrote is moved to the original key, unless an original is already there — a late PUT to a
     * used URL can then never change it. Then every staging object of the video goes.
     */
    async promoteUpload(p: { workspaceId: string; videoId: string; sourceKey: string; storageKey: string; contentType?: string }): Promise<void> {
      if (!(await storage.head(p.storageKey))) {
        try {
          await storage.move(p.sourceKey, p.storageKey, { contentType: p.contentType, onProgress: () => heartbeat() });
        } catch (err) {
          if (err instanceof StorageError && err.status === 404) {
            throw ApplicationFailure.create({ type: 'upload_missing', message: 'The uploaded object is gone', nonRetryable: true });
          }
          throw err;
        }
      }
      await storage.deletePrefix(keys.uploadsPrefix(p.workspaceId, p.videoId));
    },

    /** Removes what upload URLs wrote for a video (expiry, and after a deletion once the URL is dead). */
    async sweepUploads(p: { workspaceId: string; videoId: string }): Promise<{ deleted: number }> {
      return { deleted: await storage.deletePrefix(keys.uploadsPrefix(p.workspaceId, p.videoId)) };
    },
  };
}
