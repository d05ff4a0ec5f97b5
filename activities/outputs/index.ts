import { workspaceFairness } from '../../lib/fairness';
import { requestOutputJobs } from '../../lib/outputs/start';
import type { OutputJob } from '../../workflows/jobs/defs';
import type { ActivityDeps } from '../deps';
import { alignActivities } from './align';
import { clipActivities } from './clip';
import { staticActivities } from './static';
import { storyboardActivities } from './storyboard';

/** SPEC §14 jobs run after `ready`, and the bookkeeping around them. */
export function outputActivities(deps: ActivityDeps) {
  const { db, temporal, config } = deps;
  return {
    ...staticActivities(deps),
    ...storyboardActivities(deps),
    ...clipActivities(deps),
    ...alignActivities(deps),

    /** Called by the video's workflow once its ladder is complete (patch outputs-v1). */
    async requestOutputs(p: { videoId: string; workspaceId: string }): Promise<void> {
      // An audio-only video (SPEC §19) has no pictures to make seek previews from.
      const row = await db('videos').where({ id: p.videoId }).first('audio_layout');
      const jobs: OutputJob[] = row?.audio_layout === 'audio_only' ? ['static'] : ['static', 'storyboard'];
      await requestOutputJobs(temporal, config, { ...p, jobs, fair: await workspaceFairness(db, p.workspaceId) });
    },

    async markOutputFailed(p: { videoId: string; job: OutputJob; message: string }): Promise<void> {
      if (p.job === 'static') {
        await db('static_renditions').where({ video_id: p.videoId }).whereNot({ status: 'ready' }).update({ status: 'failed', updated_at: db.fn.now() });
      }
      deps.log.warn({ videoId: p.videoId, job: p.job, message: p.message }, 'output job failed');
    },
  };
}
