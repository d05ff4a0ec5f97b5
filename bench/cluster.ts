/**
 * Past one machine, on a real Temporal server: the `temporal-server` binary on Postgres (schema by
 * temporal-sql-tool), 2 API processes and 3 worker "hosts" (separate processes in their own process
 * groups, each polling the workflow and transcode queues), 50 uploads pushed through, one host
 * SIGKILLed mid-flight. Reports lost videos (must be 0), the time to drain after the kill, and the
 * transcode task-queue backlog KEDA's Temporal scaler would have read, sampled every second.
 *   npm run bench:cluster -- --uploads 50 --seconds 4
 * Long (builds the server once, ~10 min on 2 cores): not part of the test suite.
 */
import { Connection } from '@temporalio/client';
import { performance } from 'node:perf_hooks';
import { allReady, duplicateEvents, upload, waitVideo } from '../test/faults/flow';
import { startFaultStack } from '../test/faults/stack';
import { makeClip } from '../test/support/media';
import { startTemporalCluster } from './cluster/server';
import { arg } from './args';
import { runMain } from '../test/support/main';

// temporal.api.enums.v1.TaskQueueType
const WORKFLOW_TASKS = 1;
const ACTIVITY_TASKS = 2;

async function backlog(conn: Connection, queue: string, type: number): Promise<number> {
  const r = await conn.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: queue }, taskQueueType: type, reportStats: true });
  return Number(r.stats?.approximateBacklogCount ?? 0);
}

async function main(): Promise<void> {
  const uploads = arg('uploads', 50);
  const seconds = arg('seconds', 4);
  const killAfterReady = arg('kill-after', Math.floor(uploads / 5));
  const t = performance.now();
  const cluster = await startTemporalCluster({ host: '127.0.0.1', port: 5432, user: 'postgres' });
  console.log(`temporal-server up at ${cluster.address} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const s = await startFaultStack({ temporalAddress: cluster.address, apis: 2, workers: 0, env: { TRANSCODE_CONCURRENCY: '1' } });
  const hosts = [0, 1, 2].map(() => s.startWorker({ roles: 'workflow,transcode' }));
  const conn = await Connection.connect({ address: cluster.address });
  await new Promise((r) => setTimeout(r, 20_000)); // the hosts bundle their workflows and poll
  const clip = await makeClip({ width: 320, height: 240, seconds });

  const samples: Array<{ t: number; activities: number; workflows: number; ready: number }> = [];
  const ready = new Set<string>();
  const t0 = performance.now();
  const ids = await Promise.all(Array.from({ length: uploads }, (_, i) => upload(s, clip, { api: i % 2 })));
  let killedAt: number | undefined;
  let stop = false;
  const sampler = (async () => {
    while (!stop) {
      const [activities, workflows] = await Promise.all([
        backlog(conn, s.env.TEMPORAL_TRANSCODE_QUEUE, ACTIVITY_TASKS).catch(() => NaN),
        backlog(conn, s.env.TEMPORAL_TASK_QUEUE, WORKFLOW_TASKS).catch(() => NaN),
      ]);
      samples.push({ t: (performance.now() - t0) / 1000, activities, workflows, ready: ready.size });
      if (killedAt === undefined && ready.size >= killAfterReady) {
        killedAt = performance.now();
        await hosts[0].kill('SIGKILL');
        console.log(`SIGKILL host 0 at ${((killedAt - t0) / 1000).toFixed(1)} s with ${ready.size}/${uploads} ready`);
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  const results = await Promise.allSettled(
    ids.map((id, i) =>
      waitVideo(s, id, allReady, 1_800_000, i % 2).then(() => {
        ready.add(id);
      }),
    ),
  );
  const end = performance.now();
  stop = true;
  await sampler;
  const lost = results.filter((r) => r.status === 'rejected').length;
  const dup = await duplicateEvents(s);
  const peak = Math.max(...samples.map((x) => x.activities).filter(Number.isFinite));
  const peakWf = Math.max(...samples.map((x) => x.workflows).filter(Number.isFinite));
  console.log('');
  console.log(`| figure | value |`);
  console.log(`|---|---|`);
  console.log(`| Temporal | temporal-server ${'v1.29.1'} on Postgres, 4 history shards (not the dev server) |`);
  console.log(`| hosts | 2 API processes, 3 worker processes (workflow + transcode, 1 encode slot each) |`);
  console.log(`| uploads | ${uploads} × ${seconds} s 320x240 |`);
  console.log(`| killed | host 0 (SIGKILL) after ${killAfterReady} ready, at ${killedAt ? ((killedAt - t0) / 1000).toFixed(1) : '-'} s |`);
  console.log(`| lost | **${lost}** |`);
  console.log(`| duplicate events | ${dup} |`);
  console.log(`| all ready after | ${((end - t0) / 1000).toFixed(1)} s |`);
  console.log(`| drain after the kill | ${killedAt ? ((end - killedAt) / 1000).toFixed(1) : '-'} s |`);
  console.log(`| transcode backlog (KEDA's input), peak | ${peak} activities (targetQueueSize 2 → ${Math.ceil(peak / 2)} pods) |`);
  console.log(`| workflow-task backlog, peak | ${peakWf} |`);
  console.log('');
  console.log('backlog over time (s: transcode activities / workflow tasks / ready):');
  console.log(samples.filter((_, i) => i % 5 === 0).map((x) => `${x.t.toFixed(0)}:${x.activities}/${x.workflows}/${x.ready}`).join('  '));
  await conn.close();
  await s.close();
  await cluster.kill();
  if (lost) throw new Error(`${lost} videos never reached ready`);
}

runMain(main);
