import assert from 'node:assert/strict';
import request from 'supertest';
import { alignCaptionsWorkflowId } from '../../workflows/jobs/defs';
import { readyVideo, waitUntil } from '../playback/helpers';
import { spokenClip } from '../support/speech';
import { startStack, type Stack } from '../support/stack';
import { startWorkers } from '../support/workers';

const TEXT = 'Welcome to the studio. Today we talk about forced alignment, a way to time captions from a script.';

/**
 * Issue 45: the alignment activity marks the track ready a moment before its workflow closes. A
 * transcript posted in that moment was lost: the start failed with "already started", the error
 * was swallowed, and the track stayed `aligning` for ever (every later POST a 409). The moment is
 * held open here: the track turns ready while no workflow worker runs.
 */
describe('Outputs: a transcript posted while the last alignment of its track closes (issue 45)', function () {
  this.timeout(240_000);
  let s: Stack;

  it('is aligned by the closing run: the track turns ready again, never stuck aligning', async () => {
    s = await startStack({ workers: [] });
    let stopFlows = await startWorkers(s, ['workflow']);
    let stopMedia = await startWorkers(s, ['transcode']);
    try {
      const clip = await spokenClip(TEXT);
      const video = await readyVideo(s, clip.file, 'public');
      const align = () => request(s.url).post(`/v1/videos/${video.id}/captions/en/align`).set('Authorization', `Bearer ${s.ws.fullKey}`).set('Content-Type', 'text/plain').send(TEXT);
      const status = async () => (await s.db('captions').where({ video_id: video.uuid, language: 'en' }).first('status'))?.status as string | undefined;
      const handle = s.temporal.workflow.getHandle(alignCaptionsWorkflowId(video.uuid, 'en'));
      const alignments = async () => ((await handle.fetchHistory()).events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'alignCaptions').length;

      // The alignment waits for a media worker while the workflow worker goes away.
      await stopMedia();
      assert.equal((await align()).status, 202);
      await waitUntil(async () => (await alignments()) === 1, 'the alignment scheduled', 30_000);
      await stopFlows();
      // The track turns ready; its workflow cannot close (no workflow worker).
      stopMedia = await startWorkers(s, ['transcode']);
      await waitUntil(async () => (await status()) === 'ready', 'the first alignment ready', 120_000);
      assert.equal((await handle.describe()).status.name, 'RUNNING');

      const again = await align();
      assert.equal(again.status, 202, JSON.stringify(again.body));
      assert.equal(again.body.status, 'aligning');
      stopFlows = await startWorkers(s, ['workflow']);
      await waitUntil(async () => (await status()) === 'ready', 'the second transcript aligned (the track not stuck aligning)', 120_000);
      assert.equal(await alignments(), 2, 'the run that was closing aligned the new transcript');
      await waitUntil(async () => (await handle.describe()).status.name === 'COMPLETED', 'the run closed', 30_000);
      // And the track takes a transcript again afterwards.
      assert.equal((await align()).status, 202);
      await waitUntil(async () => (await status()) === 'ready', 'a third alignment', 120_000);
    } finally {
      await stopFlows();
      await stopMedia();
    }
  });
});
