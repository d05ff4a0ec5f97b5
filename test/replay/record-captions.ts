/**
 * Records the histories of captions from a transcript (test/fixtures/histories/captions-*.json,
 * issue 37) for the replay test: an alignment that turns the track ready, and one that fails (a
 * transcript against silence). Never touches other fixtures, never re-records one.
 * `npm run record-histories:captions` (needs the services that ./scripts/test provisions, and
 * Festival for the speech: ops/apt.ts).
 */
import { readyVideo } from '../playback/helpers';
import { runMain } from '../support/main';
import { SCRIPT, silentClip, spokenClip } from '../support/speech';
import { startStack, type Stack } from '../support/stack';
import { saveWorkflowRuns } from './save';

async function alignAndSave(s: Stack, file: string, name: string): Promise<void> {
  if (!name.startsWith('captions-')) throw new Error('this script records captions-* fixtures only');
  const v = await readyVideo(s, file, 'public');
  await s.post(`/v1/videos/${v.id}/captions/en/align`, { text: SCRIPT }).expect(202);
  const workflowId = `captions-align-${v.uuid}-en`;
  await s.temporal.workflow.getHandle(workflowId).result();
  await saveWorkflowRuns(s.temporal, name, workflowId);
}

async function main(): Promise<void> {
  const s = await startStack();
  await alignAndSave(s, (await spokenClip(SCRIPT, { leadSilence: 1.5 })).file, 'captions-align-ready');
  await alignAndSave(s, await silentClip(8), 'captions-align-failed');
}

runMain(main);
