import path from 'node:path';
import { Context } from '@temporalio/activity';
import { planStoryboard, storyboardArgs, storyboardVtt } from '../../lib/media/outputs';
import { createMediaTools } from '../../lib/media/tools';
import { outputKeys } from '../../lib/outputs/keys';
import { joinSegments, renditionSegments } from '../../lib/outputs/segments';
import type { ActivityDeps } from '../deps';
import { toFailure } from '../transcode/media';
import { loadJobVideo, removeIfDeleted, withTempDir } from './common';

/**
 * Seek-preview sprite + WebVTT (SPEC §14), from the smallest rendition: 160 px tiles need no more,
 * and it is the cheapest to decode.
 */
export function storyboardActivities({ db, storage, config }: ActivityDeps) {
  const media = createMediaTools(config.media);
  return {
    async makeStoryboard(p: { videoId: string; workspaceId: string }): Promise<{ tiles: number } | null> {
      const loaded = await loadJobVideo(db, p.videoId);
      if (!loaded || loaded.video.status !== 'ready') return null;
      const { video, renditions } = loaded;
      const rung = renditions.find((r) => r.status === 'ready');
      if (!rung || !video.duration_seconds) return null;
      const ctx = Context.current();
      const plan = planStoryboard(video.duration_seconds, rung.width, rung.height);
      await withTempDir(async (dir) => {
        const joined = path.join(dir, 'joined.ts');
        const segments = await renditionSegments(storage, video.workspace_id, video.id, rung.name);
        await joinSegments(storage, video.workspace_id, video.id, rung.name, segments, joined, () => ctx.heartbeat({ joining: rung.name }));
        const sprite = path.join(dir, 'storyboard.jpg');
        try {
          const input = await media.open(joined, ctx.cancellationSignal);
          await media.ffmpeg(storyboardArgs({ input: joined, inputArgs: input.inputArgs, output: sprite, plan }), input, {
            outputDir: dir,
            durationSeconds: video.duration_seconds,
            onProgress: (pct) => ctx.heartbeat({ pct }),
            signal: ctx.cancellationSignal,
          });
        } catch (err) {
          throw toFailure(err);
        }
        await storage.putFile(outputKeys.storyboardJpg(video.workspace_id, video.id), sprite, { contentType: 'image/jpeg' });
        await storage.put(outputKeys.storyboardVtt(video.workspace_id, video.id), storyboardVtt(plan, video.duration_seconds!, 'storyboard.jpg'), {
          contentType: 'text/vtt; charset=utf-8',
        });
      });
      await db('videos').where({ id: video.id }).update({ storyboard_ready: true });
      await removeIfDeleted(db, storage, p.workspaceId, p.videoId);
      return { tiles: plan.tiles };
    },
  };
}
