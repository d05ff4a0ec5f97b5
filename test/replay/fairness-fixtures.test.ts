import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { ALIGN_AGAIN_PATCH } from '../../workflows/jobs/captions';
import { patchIds } from './markers';

const load = (name: string) => historyFromJSON(JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'histories', `${name}.json`), 'utf8')));

/** The fair-share fixtures (npm run record-histories:fairness) hold the paths they are named for, so replay.test.ts covers them. */
describe('fair-share histories (SPEC §25)', () => {
  it('a video started with a priority runs its steps to ready on the critical lane at 1, its ladder at 4, its quality at 5', () => {
    const events = load('fair-upload-ready-idle-delete').events ?? [];
    assert.equal(events[0].workflowExecutionStartedEventAttributes?.priority?.priorityKey, 1);
    const placed = new Map<string, string>();
    for (const e of events) {
      const a = e.activityTaskScheduledEventAttributes;
      if (a) placed.set(a.activityType!.name!, `${a.taskQueue!.name!.endsWith('-critical') ? 'critical' : 'media'}/${a.priority?.priorityKey}`);
    }
    for (const [activity, where] of Object.entries({ planTranscode: 'critical/1', makeThumbnail: 'critical/1', prepareJit: 'critical/1', publishMaster: 'critical/1', encodeChunk: 'media/4', measureQuality: 'media/5' })) {
      assert.equal(placed.get(activity), where, activity);
    }
    assert.ok((load('fair-upload-ready-idle-delete-idle').events ?? []).some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'deleteVideoFiles'));
  });

  it('an alignment run took a transcript posted while it closed; alignment and added-track runs were cancelled with their video', () => {
    const again = load('fair-captions-align-again');
    assert.deepEqual(patchIds(again), [ALIGN_AGAIN_PATCH]);
    assert.equal((again.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'alignCaptions').length, 2);
    for (const name of ['fair-captions-align-cancelled', 'fair-audio-track-cancelled']) {
      assert.ok((load(name).events ?? []).some((e) => e.workflowExecutionCanceledEventAttributes), name);
    }
  });
});
