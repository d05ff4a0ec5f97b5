/**
 * Records the outputs room's histories (test/fixtures/histories/outputs-*.json) for the replay
 * test: the video workflow past the `outputs-v1` patch, a clip's workflow, and an outputs
 * workflow. Never touches the other fixtures. `npm run record-histories:outputs` (needs the
 * services that ./scripts/test provisions).
 */
import fs from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { allRenditionsReady, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { runMain } from '../support/main';

const outDir = path.join(__dirname, '..', 'fixtures', 'histories');

async function save(s: Stack, name: string, workflowId: string): Promise<void> {
  if (!name.startsWith('outputs-')) throw new Error('this script records outputs-* fixtures only');
  const history = await s.temporal.workflow.getHandle(workflowId).fetchHistory();
  fs.writeFileSync(path.join(outDir, `${name}.json`), historyToJSON(history));
  console.log(`recorded ${name}: ${history.events?.length} events`);
}

async function main(): Promise<void> {
  const s = await startStack();
  const clip = await makeClip({ width: 640, height: 360, seconds: 3 });

  // 1. Upload with mp4_support and max_resolution → ready → outputs (MP4 + storyboard) → delete.
  const a = await uploadFormA(s, clip, { extra: { mp4_support: 'capped_1080p', max_resolution: '480p', passthrough: 'rec' } });
  const ready = await waitForVideo(s, a.id, (v) => allRenditionsReady(v) && v.static_renditions[0]?.status === 'ready' && v.storyboard_url !== null);
  await s.temporal.workflow.getHandle(`outputs-${ready.uuid}`).result();
  await save(s, 'outputs-static-storyboard', `outputs-${ready.uuid}`);

  // 2. A clip of it: its own workflow, cut first → ready → delete.
  const c = await s.post(`/v1/videos/${a.id}/clips`, { start_time: 0.5, end_time: 2 }).expect(202);
  const clipVideo = await waitForVideo(s, c.body.id, allRenditionsReady);
  await s.del(`/v1/videos/${c.body.id}`).expect(204);
  await s.temporal.workflow.getHandle(`video-${clipVideo.uuid}`).result();
  await save(s, 'outputs-clip-ready-delete', `video-${clipVideo.uuid}`);

  await s.del(`/v1/videos/${a.id}`).expect(204);
  await s.temporal.workflow.getHandle(`video-${ready.uuid}`).result();
  await save(s, 'outputs-upload-ready-outputs-delete', `video-${ready.uuid}`);

}

runMain(main);
