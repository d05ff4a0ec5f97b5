/**
 * Records the histories of fair share (SPEC §25, test/fixtures/histories/fair-*.json) for the
 * replay test: a video started with a priority and a critical lane (pro workspace) through ready,
 * idle and deletion; an alignment run that takes a transcript posted while it closes (patch
 * captions-align-again); an alignment and an added audio track cancelled by their video's
 * deletion. Never touches other fixtures, never re-records one. `npm run
 * record-histories:fairness` (needs the services that ./scripts/test provisions, and Festival).
 */
import fs from 'node:fs';
import request from 'supertest';
import { audioTrackWorkflowId } from '../../workflows/audio/defs';
import { alignCaptionsWorkflowId } from '../../workflows/jobs/defs';
import { readyVideo, waitUntil } from '../playback/helpers';
import { allRenditionsReady, putFile, waitForDeletion } from '../support/flow';
import { runMain } from '../support/main';
import { makeClip } from '../support/media';
import { spokenClip } from '../support/speech';
import { startStack, type Stack } from '../support/stack';
import { startWorkers } from '../support/workers';
import { saveWorkflowRuns } from './save';

const TEXT = 'Welcome to the studio. Today we talk about forced alignment, a way to time captions from a script.';

async function uploadReadyDelete(s: Stack): Promise<void> {
  const pro = await s.newWorkspace('pro');
  const clip = await makeClip({ width: 640, height: 360, seconds: 3 });
  const init = await s.post('/v1/upload/init', { filename: 'a.mp4', size: fs.statSync(clip).size, content_type: 'video/mp4' }, pro.fullKey).expect(201);
  await putFile(init.body.upload_url, clip, 'video/mp4', init.body.upload_headers);
  await s.post('/v1/upload/complete', { video_id: init.body.video_id }, pro.fullKey).expect(202);
  await waitUntil(async () => allRenditionsReady((await s.get(`/v1/videos/${init.body.video_id}`, pro.fullKey)).body), 'ready', 90_000);
  const uuid = (await s.get(`/v1/videos/${init.body.video_id}`, pro.fullKey)).body.uuid as string;
  // Processing over (quality measured, outputs requested): the run continues as new, idle.
  const first = (await s.temporal.workflow.getHandle(`video-${uuid}`).describe()).runId;
  await waitUntil(async () => (await s.temporal.workflow.getHandle(`video-${uuid}`).describe()).runId !== first, 'idle', 90_000);
  await s.del(`/v1/videos/${init.body.video_id}`, pro.fullKey).expect(204);
  await s.temporal.workflow.getHandle(`video-${uuid}`).result();
  await saveWorkflowRuns(s.temporal, 'fair-upload-ready-idle-delete', `video-${uuid}`);
}

async function main(): Promise<void> {
  const s = await startStack({ workers: [], env: { UPLOAD_URL_TTL_SECONDS: '3', UPLOAD_GRACE_SECONDS: '0' } });
  const stopFlows = await startWorkers(s, ['workflow']);
  let stopMedia = await startWorkers(s, ['transcode']);
  try {
    await uploadReadyDelete(s);
    const align = (id: string, lang: string) => request(s.url).post(`/v1/videos/${id}/captions/${lang}/align`).set('Authorization', `Bearer ${s.ws.fullKey}`).set('Content-Type', 'text/plain').send(TEXT).expect(202);
    const speech = (await spokenClip(TEXT)).file;

    // A transcript posted while the track's run closes (test/outputs/captions-realign.test.ts).
    const v = await readyVideo(s, speech, 'public');
    const status = async () => (await s.db('captions').where({ video_id: v.uuid, language: 'en' }).first('status'))?.status;
    await stopMedia();
    await align(v.id, 'en');
    const again = s.temporal.workflow.getHandle(alignCaptionsWorkflowId(v.uuid, 'en'));
    await waitUntil(async () => ((await again.fetchHistory()).events ?? []).some((e) => e.activityTaskScheduledEventAttributes), 'scheduled', 30_000);
    await stopFlows();
    stopMedia = await startWorkers(s, ['transcode']);
    await waitUntil(async () => (await status()) === 'ready', 'first alignment', 120_000);
    await align(v.id, 'en');
    const flows = await startWorkers(s, ['workflow']);
    await again.result();
    await saveWorkflowRuns(s.temporal, 'fair-captions-align-again', again.workflowId);

    // Jobs of a deleted video: an alignment queued (no media worker), an added track waiting for its upload.
    const gone = await readyVideo(s, speech, 'public');
    await stopMedia();
    await align(gone.id, 'en');
    await s.post(`/v1/videos/${gone.id}/audio-tracks`, { language: 'es', name: 'Español', size: 1000, content_type: 'audio/mpeg' }).expect(202);
    await waitUntil(async () => ((await s.temporal.workflow.getHandle(audioTrackWorkflowId(gone.uuid, 'x-es')).describe()).raw.pendingActivities ?? []).length > 0, 'waiting for the upload', 30_000);
    await s.del(`/v1/videos/${gone.id}`).expect(204);
    for (const id of [alignCaptionsWorkflowId(gone.uuid, 'en'), audioTrackWorkflowId(gone.uuid, 'x-es')]) await s.temporal.workflow.getHandle(id).result().catch(() => undefined);
    await saveWorkflowRuns(s.temporal, 'fair-captions-align-cancelled', alignCaptionsWorkflowId(gone.uuid, 'en'));
    await saveWorkflowRuns(s.temporal, 'fair-audio-track-cancelled', audioTrackWorkflowId(gone.uuid, 'x-es'));
    stopMedia = await startWorkers(s, ['transcode']);
    await waitForDeletion(s, gone.uuid);
    await flows();
  } finally {
    await stopFlows();
    await stopMedia();
  }
  await s.close();
}

runMain(main);
