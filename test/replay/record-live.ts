/**
 * Records the live room's histories (test/fixtures/histories/live-*.json) for the replay test:
 * a broadcast with a reconnect inside the window ended by `complete`, a broadcast ended by the
 * reconnect window, and a stream deleted while idle. Never touches the other fixtures.
 * `npm run record-histories:live` (needs the services that ./scripts/test provisions).
 */
import fs from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { liveWorkflowId } from '../../workflows/live/defs';
import { type LiveStack, pushRtmp, startLiveStack, waitFor } from '../live/helpers';
import { runMain } from '../support/main';

const outDir = path.join(__dirname, '..', 'fixtures', 'histories');

async function save(s: LiveStack, name: string, workflowId: string, runId: string): Promise<void> {
  if (!name.startsWith('live-')) throw new Error('this script records live-* fixtures only');
  const history = await s.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
  fs.writeFileSync(path.join(outDir, `${name}.json`), historyToJSON(history));
  console.log(`recorded ${name}: ${history.events?.length} events`);
}

async function main(): Promise<void> {
  const s = await startLiveStack();
  const read = async (id: string) => (await s.get(`/v1/live-streams/${id}`).expect(200)).body;
  const runOf = async (id: string) => (await s.temporal.workflow.getHandle(liveWorkflowId(id)).describe()).runId;

  // 1. connect → active → disconnect → reconnect inside the window → active → complete → idle.
  const a = (await s.post('/v1/live-streams', { reconnect_window: 30 }).expect(201)).body;
  const runA = await runOf(a.id);
  const p1 = pushRtmp(`${s.rtmpBase}/${a.stream_key}`, { seconds: 10 });
  await waitFor('active', async () => (await read(a.id)).status === 'active', 60_000);
  await p1.done;
  await waitFor('disconnected', async () => (await read(a.id)).status === 'disconnected', 60_000);
  const p2 = pushRtmp(`${s.rtmpBase}/${a.stream_key}`, { seconds: 30 });
  await waitFor('active again', async () => (await read(a.id)).status === 'active', 60_000);
  await s.post(`/v1/live-streams/${a.id}/complete`).expect(200);
  await waitFor('idle', async () => (await read(a.id)).status === 'idle' && (await runOf(a.id)) !== runA, 60_000);
  p2.stop();
  await save(s, 'live-reconnect-complete', liveWorkflowId(a.id), runA);

  // 2. connect → active → encoder leaves → the window passes → idle.
  const b = (await s.post('/v1/live-streams', { reconnect_window: 1 }).expect(201)).body;
  const runB = await runOf(b.id);
  const p3 = pushRtmp(`${s.rtmpBase}/${b.stream_key}`, { seconds: 10 });
  await waitFor('active', async () => (await read(b.id)).status === 'active', 60_000);
  await p3.done;
  await waitFor('idle', async () => (await read(b.id)).status === 'idle' && (await runOf(b.id)) !== runB, 60_000);
  await save(s, 'live-window-passed', liveWorkflowId(b.id), runB);

  // 3. a stream deleted while idle: its next run ends.
  const runB2 = await runOf(b.id);
  await s.del(`/v1/live-streams/${b.id}`).expect(204);
  await s.temporal.workflow.getHandle(liveWorkflowId(b.id), runB2).result();
  await save(s, 'live-idle-delete', liveWorkflowId(b.id), runB2);

  await s.close();
}

runMain(main);
