import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { createLogger } from '../../lib/logger';
import { putFile, until } from '../support/flow';
import { temporalEnv } from '../support/hooks';
import { makeClip } from '../support/media';
import { findTool } from '../support/services';
import { startStack } from '../support/stack';

const run = promisify(execFile);

interface Described {
  pendingActivities?: Array<{ activityType: { name: string }; priority?: Record<string, unknown>; activityOptions?: { taskQueue?: { name: string } } }>;
}

/**
 * SPEC §25: what an operator sees of a task that waits. `temporal workflow describe` answers with
 * what the Temporal UI's pending-activity card shows: the activity's task queue (its options),
 * its priority key and its fairness key. With no media worker, a new video still becomes ready
 * on the critical lane alone, and its bulk work waits, marked as bulk.
 */
describe('fair share: a waiting activity shows its queue, priority and fairness key (real Temporal)', function () {
  this.timeout(120_000);

  it('a probe waits on the critical lane at priority 1; served by that lane alone the video turns ready, its bulk work waiting at 4', async () => {
    const stack = await startStack({ workers: ['workflow'] });
    const ws = await stack.newWorkspace('pro');
    const clip = await makeClip({ width: 320, height: 240, seconds: 2 });
    const init = await stack.post('/v1/upload/init', { filename: 'a.mp4', size: fs.statSync(clip).size, content_type: 'video/mp4' }, ws.fullKey);
    assert.equal(init.status, 201, JSON.stringify(init.body));
    assert.equal((await putFile(init.body.upload_url, clip, 'video/mp4', init.body.upload_headers)).status, 200);
    assert.equal((await stack.post('/v1/upload/complete', { video_id: init.body.video_id }, ws.fullKey)).status, 202);
    const uuid = (await stack.db('videos').where({ workspace_id: ws.id }).first('id')).id as string;

    const cli = findTool('TEMPORAL_CLI_PATH', 'temporal');
    const pending = async (activity: string) => {
      let found: NonNullable<Described['pendingActivities']>[number] | undefined;
      await until(async () => {
        const { stdout } = await run(cli, ['workflow', 'describe', '--address', stack.config.temporal.address, '--workflow-id', `video-${uuid}`, '--output', 'json']);
        found = ((JSON.parse(stdout) as Described).pendingActivities ?? []).find((a) => a.activityType.name === activity);
        return found !== undefined;
      }, 60_000, `${activity} pending`, 200);
      return found!;
    };
    const fair = { fairnessKey: ws.id, fairnessWeight: 4 };
    const probe = await pending('planTranscode');
    assert.equal(probe.activityOptions?.taskQueue?.name, stack.config.temporal.criticalQueue);
    assert.deepEqual(probe.priority, { priorityKey: 1, ...fair });

    // Only the critical lane is served: the way to `ready` needs nothing else.
    const { nativeConnection } = await temporalEnv();
    const temporal = stack.temporal;
    const lane = await Worker.create({
      connection: nativeConnection,
      taskQueue: stack.config.temporal.criticalQueue,
      activities: createActivities({ config: stack.config, db: stack.db, storage: stack.storage, temporal, log: createLogger('silent', 'test') }),
    });
    const serving = lane.run();
    try {
      await until(async () => (await stack.get(`/v1/videos/${init.body.video_id}`, ws.fullKey)).body.status === 'ready', 60_000, 'ready', 200);
      // Behind `ready`, the audio group's encode waits on the transcode queue as bulk work.
      const audio = await pending('encodeAudioTracks');
      assert.equal(audio.activityOptions?.taskQueue?.name, stack.config.temporal.transcodeQueue);
      assert.deepEqual(audio.priority, { priorityKey: 4, ...fair });
    } finally {
      lane.shutdown();
      await serving;
    }
  });
});
