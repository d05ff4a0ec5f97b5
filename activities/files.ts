import { heartbeat } from '@temporalio/activity';
import { keys } from '../lib/storage';
import type { ActivityDeps } from './deps';

export function fileActivities({ storage, log }: ActivityDeps) {
  return {
    /** Removes every object of a video; safe to run again after a crash. */
    async deleteVideoFiles(p: { workspaceId: string; videoId: string }): Promise<{ deleted: number }> {
      let deleted = 0;
      for (const prefix of [keys.originalsPrefix(p.workspaceId, p.videoId), keys.videoPrefix(p.workspaceId, p.videoId)]) {
        heartbeat({ prefix });
        deleted += await storage.deletePrefix(prefix);
      }
      log.info({ videoId: p.videoId, deleted }, 'video files deleted');
      return { deleted };
    },
  };
}
