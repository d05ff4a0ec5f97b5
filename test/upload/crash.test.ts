import assert from 'node:assert/strict';
import { allRenditionsReady, allRunEvents, uploadFormA, waitForVideo } from '../support/flow';
import { spawnWorker } from '../support/child';
import { onTeardown } from '../support/hooks';
import { makeClip } from '../support/media';
import { startStack } from '../support/stack';

describe('crash recovery', function () {
  it('SIGKILL of the transcode worker mid-rendition: a new worker finishes every rendition', async function () {
    this.timeout(240_000);
    // Only the orchestration runs in this process; ffmpeg runs in a child we can kill.
    const s = await startStack({ workers: ['workflow'], env: { X264_PRESET: 'medium' } });
    const first = spawnWorker(s.env);
    onTeardown(() => first.kill());
    const clip = await makeClip({ width: 1280, height: 720, seconds: 12 });
    const { id } = await uploadFormA(s, clip);

    // Wait until a rendition is being encoded and has made progress, then pull the plug.
    const encoding = await waitForVideo(
      s,
      id,
      (v) => v.renditions.some((r: { status: string; progress: number }) => r.status === 'processing' && r.progress > 0),
      120_000,
    );
    const victim = encoding.renditions.find((r: { status: string }) => r.status === 'processing').name;
    await first.kill('SIGKILL');

    // The new worker encodes at ultrafast: what is under test is that it takes the killed
    // rendition over and finishes every one, not how long medium takes to encode it again (the
    // preset is the worker's own setting, read by the activity that runs there).
    const second = spawnWorker({ ...s.env, X264_PRESET: 'ultrafast' });
    onTeardown(() => second.kill());
    const done = await waitForVideo(s, id, allRenditionsReady, 180_000);
    assert.deepEqual(
      done.renditions.map((r: { name: string; status: string }) => `${r.name}:${r.status}`),
      ['240p:ready', '360p:ready', '480p:ready', '720p:ready'],
    );
    // The killed rendition really was attempted twice.
    const events = await allRunEvents(s, `video-${done.uuid}`);
    const started = events.filter((e) => e.activityTaskStartedEventAttributes);
    const scheduled = new Map(events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => [String(e.eventId), e]));
    const retried = started.filter((e) => {
      const sched = scheduled.get(String(e.activityTaskStartedEventAttributes!.scheduledEventId));
      return ['transcodeRendition', 'encodeChunk'].includes(sched?.activityTaskScheduledEventAttributes?.activityType?.name ?? '') && (e.activityTaskStartedEventAttributes!.attempt ?? 1) > 1;
    });
    assert.ok(retried.length >= 1, `the ${victim} rendition was retried after the crash`);
    await second.kill('SIGTERM');
  });
});
