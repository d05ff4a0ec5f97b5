import path from 'node:path';
import { Context } from '@temporalio/activity';
import { clipArgs } from '../../lib/media/outputs';
import { createMediaTools } from '../../lib/media/tools';
import type { ActivityDeps } from '../deps';
import { toFailure } from '../transcode/media';
import { withTempDir } from './common';

/** SPEC §14 clips: the range of the source's original, re-encoded frame-accurately, becomes the clip's original. */
export function clipActivities({ storage, config }: ActivityDeps) {
  const media = createMediaTools(config.media);
  return {
    async cutClip(p: { sourceStorageKey: string; storageKey: string; startSeconds: number; endSeconds: number }): Promise<void> {
      const ctx = Context.current();
      await withTempDir(async (dir) => {
        const output = path.join(dir, 'clip.mp4');
        try {
          // The source's original is user media: opened under the allow-lists, cut in the sandbox.
          const input = await media.open(await storage.mediaSource(p.sourceStorageKey), ctx.cancellationSignal);
          await media.ffmpeg(
            clipArgs({ input: input.path, inputArgs: input.inputArgs, output, start: p.startSeconds, end: p.endSeconds, hasAudio: input.info.hasAudio }),
            input,
            { outputDir: dir, durationSeconds: p.endSeconds - p.startSeconds, onProgress: (pct) => ctx.heartbeat({ pct }), signal: ctx.cancellationSignal },
          );
        } catch (err) {
          throw toFailure(err);
        }
        await storage.putFile(p.storageKey, output, { contentType: 'video/mp4' });
      });
    },
  };
}
