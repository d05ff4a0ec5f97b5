import assert from 'node:assert/strict';
import request from 'supertest';
import { alignCaptionsWorkflowId } from '../../workflows/jobs/defs';
import { audioTrackWorkflowId } from '../../workflows/audio/defs';
import { readyVideo, waitUntil } from '../playback/helpers';
import { waitForDeletion } from '../support/flow';
import { loopedClip, makeClip } from '../support/media';
import { spokenClip } from '../support/speech';
import { startStack, type Stack } from '../support/stack';
import { startWorkers } from '../support/workers';

const TEXT = 'Welcome to the studio. Today we talk about forced alignment, a way to time captions from a script.';

const align = (s: Stack, id: string, lang: string, text = TEXT) =>
  request(s.url).post(`/v1/videos/${id}/captions/${lang}/align`).set('Authorization', `Bearer ${s.ws.fullKey}`).set('Content-Type', 'text/plain').send(text);
const status = async (s: Stack, workflowId: string) => (await s.temporal.workflow.getHandle(workflowId).describe()).status.name;

/**
 * SPEC §25 bounds: on-request jobs (alignments, added audio tracks, clips) in flight are bounded
 * per video and per workspace, every language tag of a video counting against the same bound; and
 * a deleted video's queued and running jobs stop (19 queued alignments outlived their video).
 * Jobs are held queued by taking the media workers away (startWorkers).
 */
describe('fair share: on-request jobs are bounded, and go with their video (real Temporal)', function () {
  this.timeout(240_000);

  it('429 too_many_jobs with Retry-After past the per-video bound (en, en-US, en-GB: one video) and the per-workspace bound', async () => {
    const s = await startStack({ workers: [], env: { JOBS_PER_VIDEO: '2', JOBS_PER_WORKSPACE: '3', JOBS_RETRY_AFTER_SECONDS: '17' } });
    const stopFlows = await startWorkers(s, ['workflow']);
    const stopMedia = await startWorkers(s, ['transcode']);
    try {
      const clip = await makeClip({ width: 320, height: 240, seconds: 3 });
      const [a, b] = [await readyVideo(s, clip), await readyVideo(s, clip)];
      await stopMedia(); // every job stays in flight from here on

      assert.equal((await align(s, a.id, 'en')).status, 202);
      const same = await align(s, a.id, 'EN');
      assert.equal(same.status, 409, 'EN is the en track, aligning already');
      assert.equal(same.body.error.code, 'alignment_in_progress');
      assert.equal((await align(s, a.id, 'en-US')).status, 202);
      for (const lang of ['en-GB', 'EN-gb', 'fr', 'fr-CA']) {
        const refused = await align(s, a.id, lang);
        assert.equal(refused.status, 429, `${lang}: ${JSON.stringify(refused.body)}`);
        assert.equal(refused.body.error.code, 'too_many_jobs');
        assert.deepEqual(refused.body.error.details, { scope: 'video', limit: 2 });
        assert.equal(refused.headers['retry-after'], '17');
      }
      // Nothing of a refusal stays behind: no track, no workflow.
      assert.deepEqual((await s.db('captions').where({ video_id: a.uuid }).orderBy('language').pluck('language')), ['en', 'en-US']);

      assert.equal((await align(s, b.id, 'fr')).status, 202, 'the workspace has room for a third');
      const workspace = await align(s, b.id, 'en');
      assert.equal(workspace.status, 429);
      assert.deepEqual(workspace.body.error.details, { scope: 'workspace', limit: 3 });
      // Added audio tracks and clips are jobs too.
      const track = await s.post(`/v1/videos/${b.id}/audio-tracks`, { language: 'es', name: 'Español', size: 1000, content_type: 'audio/mpeg' });
      assert.equal(track.status, 429, JSON.stringify(track.body));
      assert.equal(track.body.error.code, 'too_many_jobs');
      const clipOf = await s.post(`/v1/videos/${b.id}/clips`, { start_time: 0, end_time: 1 });
      assert.equal(clipOf.status, 429, JSON.stringify(clipOf.body));
      assert.equal(clipOf.headers['retry-after'], '17');
      assert.equal(Number((await s.db('videos').whereNotNull('source_video_id').count('* as n').first())?.n), 0, 'no clip was made');
    } finally {
      await stopFlows();
      await stopMedia();
    }
  });

  it("deleting a video cancels its queued alignments and its running jobs at once; a running alignment's aligner stops", async () => {
    const s = await startStack({ workers: [] });
    const stopFlows = await startWorkers(s, ['workflow']);
    let stopMedia = await startWorkers(s, ['transcode']);
    try {
      // About 3 minutes of speech: its alignment would run for several seconds; it is deleted in the first.
      const speech = await spokenClip(TEXT);
      const [queued, running] = [await readyVideo(s, speech.file), await readyVideo(s, await loopedClip(speech.file, 30))];

      // Queued: no media worker takes them. Running: an added track waiting for its upload.
      await stopMedia();
      for (const lang of ['en', 'fr']) assert.equal((await align(s, queued.id, lang)).status, 202);
      assert.equal((await s.post(`/v1/videos/${queued.id}/audio-tracks`, { language: 'es', name: 'Español', size: 1000, content_type: 'audio/mpeg' })).status, 202);
      const jobs = [alignCaptionsWorkflowId(queued.uuid, 'en'), alignCaptionsWorkflowId(queued.uuid, 'fr'), audioTrackWorkflowId(queued.uuid, 'x-es')];
      await waitUntil(async () => (await Promise.all(jobs.map((id) => status(s, id)))).every((st) => st === 'RUNNING'), 'the jobs started', 20_000);
      const t0 = Date.now();
      await s.del(`/v1/videos/${queued.id}`).expect(204);
      await waitUntil(async () => (await Promise.all(jobs.map((id) => status(s, id)))).every((st) => st === 'CANCELLED'), 'every job of the deleted video cancelled, with no media worker running', 20_000);
      const cancelMs = Date.now() - t0;

      // A running alignment: its aligner is stopped, it publishes nothing.
      stopMedia = await startWorkers(s, ['transcode']);
      assert.equal((await align(s, running.id, 'en', Array(30).fill(TEXT).join(' '))).status, 202);
      const handle = s.temporal.workflow.getHandle(alignCaptionsWorkflowId(running.uuid, 'en'));
      // Running: the decode or the aligner has heartbeated (the activity is started, not queued).
      await waitUntil(async () => ((await handle.describe()).raw.pendingActivities ?? []).some((p) => p.lastHeartbeatTime), 'the alignment running', 30_000);
      const t1 = Date.now();
      await s.del(`/v1/videos/${running.id}`).expect(204);
      await waitUntil(async () => (await status(s, handle.workflowId)) === 'CANCELLED', 'the running alignment cancelled', 30_000);
      const stopMs = Date.now() - t1;
      const events = (await handle.fetchHistory()).events ?? [];
      // Its ffmpeg or aligner was stopped: the activity ended without completing (a kill mid-run may report as a failure).
      assert.ok(!events.some((e) => e.activityTaskCompletedEventAttributes), 'the alignment never completed');
      assert.ok(events.some((e) => e.activityTaskCanceledEventAttributes || e.activityTaskFailedEventAttributes), 'the alignment ended');
      assert.ok(stopMs < 15_000, `stopped in ${stopMs} ms`);
      await waitForDeletion(s, queued.uuid);
      await waitForDeletion(s, running.uuid);
      assert.ok(cancelMs < 20_000, `cancelled in ${cancelMs} ms`);
    } finally {
      await stopFlows();
      await stopMedia();
    }
  });
});
