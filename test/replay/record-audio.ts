/**
 * Records the audio room's histories (test/fixtures/histories/audio-*.json, SPEC §19) for the
 * replay test: a two-language video past the `audio-v1` marker (its processing run and its idle
 * runs), an audio-only upload with cover art, and an added track's own workflow. Never touches
 * other fixtures, never re-records one. `npm run record-histories:audio` (needs the services that
 * ./scripts/test provisions).
 */
import fs from 'node:fs';
import { settled, upload } from '../audio/helpers';
import { audioSource } from '../audio/media';
import { until, waitForDeletion } from '../support/flow';
import { startStack, type Stack } from '../support/stack';
import { runMain } from '../support/main';
import { saveWorkflowRuns } from './save';

async function save(s: Stack, name: string, workflowId: string): Promise<void> {
  if (!name.startsWith('audio-')) throw new Error('this script records audio-* fixtures only');
  await saveWorkflowRuns(s.temporal, name, workflowId);
}

async function main(): Promise<void> {
  const s = await startStack();
  // 1. Two languages → AUDIO group → ready → idle; a Spanish track added from a URL; delete.
  const v = await settled(s, await upload(s, await audioSource('twoLangMkv')));
  const a = await settled(s, await upload(s, await audioSource('mp3Cover')));
  const track = await audioSource('longTrack');
  const r = await s.post(`/v1/videos/${v.id}/audio-tracks`, { language: 'es', name: 'Español', size: fs.statSync(track.file).size, content_type: track.contentType }).expect(202);
  await fetch(r.body.upload_url, { method: 'PUT', body: fs.readFileSync(track.file), headers: r.body.upload_headers });
  const trackWorkflow = `audio-track-${v.uuid}-x-es`;
  await s.temporal.workflow.getHandle(trackWorkflow).result();
  // `audio-added-track-upload` was recorded before the wait left the transcode queue
  // (patched('audio-track-upload-wait-orchestration'), issue 33 row 11); this is the path after it.
  await save(s, 'audio-added-track-upload-wait', trackWorkflow);
  for (const [x, name] of [[v, 'audio-two-languages-idle-delete'], [a, 'audio-only-cover-idle-delete']] as const) {
    await until(async () => (await s.temporal.workflow.getHandle(`video-${x.uuid}`).fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId !== undefined, 30_000, 'idle run', 200);
    await s.del(`/v1/videos/${x.id}`).expect(204);
    await waitForDeletion(s, x.uuid);
    await save(s, name, `video-${x.uuid}`);
  }
}

runMain(main);
