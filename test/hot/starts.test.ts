import assert from 'node:assert/strict';
import fs from 'node:fs';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Hot } from '../../api/hot';
import type { Deps } from '../../api/deps';
import { createVideo } from '../../api/upload/create';
import type { Config } from '../../lib/config';
import { parseVideoId, videoPublicId } from '../../lib/ids';
import { createLogger } from '../../lib/logger';
import { startPending, WorkflowStarter } from '../../lib/videos/starts';
import { allRenditionsReady, until, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * POST /upload/init writes its workflow's start to an outbox in the video's transaction and the
 * start is made after the answer (lib/videos/starts.ts). These tests take the outbox's failure
 * cases one by one: the creating process dying between commit and start, a client completing its
 * upload first, a start made twice, and deployments sharing a database.
 */
describe('hot: workflow starts through the outbox', function () {
  this.timeout(120_000);
  let s: Stack;
  let clip: string;

  before(async function () {
    this.timeout(240_000);
    s = await startStack();
    clip = await makeClip({ width: 320, height: 180, seconds: 2 });
  });

  const workflowStatus = async (uuid: string): Promise<{ status: string; runId: string } | undefined> => {
    try {
      const d = await s.temporal.workflow.getHandle(`video-${uuid}`).describe();
      return { status: d.status.name, runId: d.runId };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  };
  const pendingRow = (uuid: string) => s.db('video_workflow_starts').where({ video_id: uuid }).first();
  /**
   * A video created as init creates it, by a process that dies right after the commit: its
   * starter never makes the start (`config` may name another Temporal cluster).
   */
  const createdByADeadProcess = async (config: Config = s.config) => {
    const hot = { ...s.app.hot, starts: { kick() {} } } as unknown as Hot;
    const deps: Deps = { config, db: s.db, storage: s.storage, temporal: s.temporal, log: createLogger('silent'), hot };
    const size = fs.statSync(clip).size;
    const auth = { keyId: 'test', workspaceId: s.ws.id, access: 'full' as const, plan: 'free' };
    const v = await createVideo(deps, auth, {
      filename: 'outbox.mp4',
      contentType: 'video/mp4',
      size,
      source: { kind: 'upload', declaredSize: size, contentType: 'video/mp4', uploadTimeoutMs: 3_600_000 },
    });
    return v;
  };

  it('init answers, then its own process starts the workflow and drops the row', async () => {
    const init = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4' }).expect(201);
    const uuid = parseVideoId(init.body.video_id)!;
    await until(async () => (await workflowStatus(uuid))?.status === 'RUNNING', 10_000, 'the workflow running');
    await until(async () => !(await pendingRow(uuid)), 5_000, 'the outbox row dropped');
  });

  it('a start left by a process that died after the commit is made by a sweep once its lease lapses', async () => {
    const v = await createdByADeadProcess();
    const row = await pendingRow(v.id);
    assert.ok(row, 'the start was written with the video');
    assert.ok(new Date(row.next_attempt_at).getTime() > Date.now(), 'under its creator\'s lease');
    assert.equal(await workflowStatus(v.id), undefined, 'nothing started it');
    await s.db('video_workflow_starts').where({ video_id: v.id }).update({ next_attempt_at: s.db.fn.now() });
    await until(async () => (await workflowStatus(v.id))?.status === 'RUNNING', 10_000, 'the swept start');
    // The sweep drops the row once Temporal has answered the start, a moment after the run exists.
    await until(async () => !(await pendingRow(v.id)), 5_000, 'the swept row dropped');
  });

  it('completing an upload whose workflow the outbox has not started yet starts it, and the video gets ready', async () => {
    const v = await createdByADeadProcess();
    await s.storage.putFile(v.uploadKey!, clip, { contentType: 'video/mp4' });
    const id = videoPublicId(v.id);
    await s.post('/v1/upload/complete', { video_id: id }).expect(202);
    assert.equal(await pendingRow(v.id), undefined, 'the start was taken by the completion');
    await waitForVideo(s, id, allRenditionsReady);
  });

  it('a start made twice is made once: the second finds the workflow and drops its row', async () => {
    const v = await createdByADeadProcess();
    const row = await pendingRow(v.id);
    assert.equal(await startPending(s.db, s.temporal, v.id), true);
    const first = await workflowStatus(v.id);
    assert.equal(first?.status, 'RUNNING');
    // As if the first start's answer was lost before its row was dropped.
    await s.db('video_workflow_starts').insert({ ...row, next_attempt_at: new Date(Date.now() - 1000) });
    await until(async () => !(await pendingRow(v.id)), 10_000, 'the repeated start settled');
    assert.deepEqual(await workflowStatus(v.id), first, 'the same run, not a new one');
  });

  it('a start still waiting in its creating process when its lease lapses is made once, by the sweep', async () => {
    // Rows for a cluster of their own, so only the starter made here takes them; its client
    // makes real starts but holds the ones in `held` until released, counting every call.
    const config = { ...s.config, temporal: { ...s.config.temporal, address: '127.0.0.1:2' } };
    const calls = new Map<string, number>();
    const held = new Set<string>();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const temporal = {
      workflow: {
        start: async (name: string, opts: { workflowId: string }) => {
          calls.set(opts.workflowId, (calls.get(opts.workflowId) ?? 0) + 1);
          if (held.has(opts.workflowId)) await gate;
          return s.temporal.workflow.start(name as never, opts as never);
        },
      },
    } as unknown as Stack['temporal'];
    const starter = new WorkflowStarter(s.db, temporal, config, createLogger('silent'), 100);
    try {
      const vs = [await createdByADeadProcess(config), await createdByADeadProcess(config), await createdByADeadProcess(config)];
      const rows = await Promise.all(vs.map((v) => pendingRow(v.id)));
      for (const v of vs.slice(0, 2)) held.add(`video-${v.id}`);
      // Two batches in flight (held), the third start waits in the process's memory...
      for (const [i, v] of vs.entries()) starter.kick(v.id, rows[i].start);
      // ...past the lease every row was written with.
      await s.db('video_workflow_starts').whereIn('video_id', vs.map((v) => v.id)).update({ next_attempt_at: s.db.fn.now() });
      await until(async () => (await workflowStatus(vs[2].id))?.status === 'RUNNING', 10_000, 'the waiting start made by the sweep');
      await sleep(300); // more sweeps, while the first two are still being started
      release();
      await until(async () => (await s.db('video_workflow_starts').whereIn('video_id', vs.map((v) => v.id))).length === 0, 10_000, 'every row dropped');
      for (const v of vs) assert.equal((await workflowStatus(v.id))?.status, 'RUNNING');
      assert.deepEqual(vs.map((v) => calls.get(`video-${v.id}`)), [1, 1, 1], 'each start made once');
    } finally {
      release();
      await starter.close();
    }
  });

  it("rows for another Temporal cluster are not this deployment's to start", async () => {
    const other = { ...s.config, temporal: { ...s.config.temporal, address: '127.0.0.1:1' } };
    const v = await createdByADeadProcess(other);
    await s.db('video_workflow_starts').where({ video_id: v.id }).update({ next_attempt_at: s.db.fn.now() });
    await sleep(2500); // two sweeps (one a second)
    const row = await pendingRow(v.id);
    assert.equal(row?.attempts, 0, 'no sweep of this cluster took it');
    assert.equal(await workflowStatus(v.id), undefined);
    await s.db('videos').where({ id: v.id }).delete();
    assert.equal(await pendingRow(v.id), undefined, 'the row goes with its video');
  });
});
