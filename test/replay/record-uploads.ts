/**
 * Records the uploads room's histories past the `promote-on-orchestrator` patch
 * (test/fixtures/histories/uploads-*.json): an upload promoted on the orchestration queue, ready,
 * idle, deleted. Keeps every fixture that exists (saveWorkflowRuns). `npm run
 * record-histories:uploads` (needs the services that ./scripts/test provisions).
 */
import { parseVideoId } from '../../lib/ids';
import { allRenditionsReady, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { runMain } from '../support/main';
import { startStack } from '../support/stack';
import { saveWorkflowRuns } from './save';

async function main(): Promise<void> {
  // A deleted upload's workflow sweeps its staging prefix once the upload URL has died: 3 s here.
  const s = await startStack({ env: { UPLOAD_URL_TTL_SECONDS: '3', UPLOAD_GRACE_SECONDS: '0' } });
  const clip = await makeClip({ width: 640, height: 360, seconds: 3 });
  const v = await uploadFormA(s, clip);
  await waitForVideo(s, v.id, allRenditionsReady);
  await s.del(`/v1/videos/${v.id}`).expect(204);
  const workflowId = `video-${parseVideoId(v.id)}`;
  await s.temporal.workflow.getHandle(workflowId).result();
  await saveWorkflowRuns(s.temporal, 'uploads-promote-here-idle-delete', workflowId);
}

runMain(main);
