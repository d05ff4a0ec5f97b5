// A deliberately non-deterministic edit of the video workflow: one extra activity before the
// real code runs. Replaying recorded histories against it must fail (test/replay/replay.test.ts).
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import type { VideoWorkflowInput } from '../../workflows/video/defs';
import { videoWorkflow as current } from '../../workflows/video/video';

export async function videoWorkflow(input: VideoWorkflowInput): Promise<void> {
  await proxyActivities<Activities>({ startToCloseTimeout: '1 minute' }).originalExists({ storageKey: input.storageKey });
  return current(input);
}
