/**
 * Records the live room's histories (test/fixtures/histories/live-*.json) for the replay test:
 * a broadcast with a reconnect inside the window ended by `complete`, a broadcast ended by the
 * reconnect window, a stream deleted while idle, and a disconnect that the media server reports
 * only after the session ended (patch `live-late-disconnect`). Never touches the other fixtures
 * and never re-records one: a fixture that exists is kept (recorded histories stand for workflows
 * already running).
 * `npm run record-histories:live [-- --only <fixture name>]` (needs the services that
 * ./scripts/test provisions); `--only` runs just the scenario that records that fixture.
 */
import fs from 'node:fs';
import path from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { liveWorkflowId } from '../../workflows/live/defs';
import { type LiveStack, pushRtmp, startLiveStack, waitFor } from '../live/helpers';
import { runMain } from '../support/main';
import { activitiesScheduled, patchIds } from './markers';

const outDir = path.join(__dirname, '..', 'fixtures', 'histories');

async function save(s: LiveStack, name: string, workflowId: string, runId: string): Promise<void> {
  if (!name.startsWith('live-')) throw new Error('this script records live-* fixtures only');
  const history = await s.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
  try {
    fs.writeFileSync(path.join(outDir, `${name}.json`), historyToJSON(history), { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    console.log(`kept ${name}.json (fixtures are never re-recorded)`);
    return;
  }
  console.log(`recorded ${name}: ${history.events?.length} events`);
}

type Scenario = (s: LiveStack) => Promise<void>;

const read = async (s: LiveStack, id: string) => (await s.get(`/v1/live-streams/${id}`).expect(200)).body;
const runOf = async (s: LiveStack, id: string) => (await s.temporal.workflow.getHandle(liveWorkflowId(id)).describe()).runId;

/** 1. connect → active → disconnect → reconnect inside the window → active → complete → idle. */
const reconnectComplete: Scenario = async (s) => {
  const a = (await s.post('/v1/live-streams', { reconnect_window: 30 }).expect(201)).body;
  const runA = await runOf(s, a.id);
  const p1 = pushRtmp(`${s.rtmpBase}/${a.stream_key}`, { seconds: 10 });
  await waitFor('active', async () => (await read(s, a.id)).status === 'active', 60_000);
  await p1.done;
  await waitFor('disconnected', async () => (await read(s, a.id)).status === 'disconnected', 60_000);
  const p2 = pushRtmp(`${s.rtmpBase}/${a.stream_key}`, { seconds: 30 });
  await waitFor('active again', async () => (await read(s, a.id)).status === 'active', 60_000);
  await s.post(`/v1/live-streams/${a.id}/complete`).expect(200);
  await waitFor('idle', async () => (await read(s, a.id)).status === 'idle' && (await runOf(s, a.id)) !== runA, 60_000);
  p2.stop();
  await save(s, 'live-reconnect-complete', liveWorkflowId(a.id), runA);
};

/** 2. connect → active → encoder leaves → the window passes → idle; 3. then deleted while idle: its next run ends. */
const windowPassedIdleDelete: Scenario = async (s) => {
  const b = (await s.post('/v1/live-streams', { reconnect_window: 1 }).expect(201)).body;
  const runB = await runOf(s, b.id);
  const p3 = pushRtmp(`${s.rtmpBase}/${b.stream_key}`, { seconds: 10 });
  await waitFor('active', async () => (await read(s, b.id)).status === 'active', 60_000);
  await p3.done;
  await waitFor('idle', async () => (await read(s, b.id)).status === 'idle' && (await runOf(s, b.id)) !== runB, 60_000);
  await save(s, 'live-window-passed', liveWorkflowId(b.id), runB);

  const runB2 = await runOf(s, b.id);
  await s.del(`/v1/live-streams/${b.id}`).expect(204);
  await s.temporal.workflow.getHandle(liveWorkflowId(b.id), runB2).result();
  await save(s, 'live-idle-delete', liveWorkflowId(b.id), runB2);
};

/**
 * 4. The media server stops mid-broadcast without reporting its encoder: the session ends on its
 * own (feed_ended, nobody said the encoder left) and the workflow waits 3 s for that word
 * (patched 'live-late-disconnect'). The restarted media server reports its old encoder inside
 * that wait: the disconnect of a session that already ended counts → disconnected → the window
 * passes → idle. Saved only if the history went that way (one session, no restart of it).
 */
const lateDisconnect: Scenario = async (s) => {
  const c = (await s.post('/v1/live-streams', { reconnect_window: 1 }).expect(201)).body;
  const workflowId = liveWorkflowId(c.id);
  const runC = await runOf(s, c.id);
  const history = () => s.temporal.workflow.getHandle(workflowId, runC).fetchHistory();
  const push = pushRtmp(`${s.rtmpBase}/${c.stream_key}`, { seconds: 60 });
  try {
    await waitFor('active', async () => (await read(s, c.id)).status === 'active', 60_000);
    await s.ingest.stop();
    await waitFor('the session ended, waiting for the disconnect', async () => patchIds(await history()).includes('live-late-disconnect'), 60_000, 100);
    // Its start-up sweep signals the disconnect of the encoder the stopped server never reported.
    await s.restartIngest();
    await waitFor('idle', async () => (await read(s, c.id)).status === 'idle' && (await runOf(s, c.id)) !== runC, 60_000);
  } finally {
    push.stop();
  }
  const h = await history();
  const sessions = activitiesScheduled(h, 'runLiveSession');
  if (sessions !== 1) throw new Error(`the disconnect came after the 3 s wait (${sessions} sessions ran): not saved, run again`);
  await save(s, 'live-late-disconnect', workflowId, runC);
};

/** By the fixture each records; the default run records them all, in this order. */
const scenarios: Record<string, Scenario> = {
  'live-reconnect-complete': reconnectComplete,
  'live-window-passed': windowPassedIdleDelete,
  'live-idle-delete': windowPassedIdleDelete,
  'live-late-disconnect': lateDisconnect,
};

async function main(): Promise<void> {
  const i = process.argv.indexOf('--only');
  const only = i >= 0 ? process.argv[i + 1] : undefined;
  if (only !== undefined && !scenarios[only]) throw new Error(`--only takes one of: ${Object.keys(scenarios).join(', ')}`);
  const run = only ? [scenarios[only]] : [...new Set(Object.values(scenarios))];
  const s = await startLiveStack();
  for (const scenario of run) await scenario(s);
  await s.close();
}

runMain(main);
