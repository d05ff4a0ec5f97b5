import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions, type WorkflowBundleOption } from '@temporalio/worker';
import { createActivities } from '../activities';
import type { Config } from '../lib/config';
import type { Db } from '../lib/db';
import type { Logger } from '../lib/logger';
import type { Storage } from '../lib/storage';
import { mediaClassByPriority } from './media-class';
import { activityMetrics } from './metrics';
import { temporalConnectionOptions } from '../lib/temporal';
import { workflowsPath } from './workflow-bundle';

export type Role = 'workflow' | 'transcode' | 'live';

export interface WorkerDeps {
  config: Config;
  db: Db;
  storage: Storage;
  log: Logger;
}

/**
 * The orchestration worker runs workflows and the quick bookkeeping activities; the transcode
 * worker runs ffmpeg and storage I/O, as many at once as there are cores, and polls the critical
 * lane with slots of its own (SPEC §25, docs/fairness.md). Scale each on its own.
 */
export async function createWorkers(
  deps: WorkerDeps,
  roles: Role[],
  opts: {
    connection?: NativeConnection;
    workflowBundle?: WorkflowBundleOption;
    /**
     * Tests only: run workflow code in this thread (Temporal's `debugMode`) instead of a worker
     * thread of its own. The same sandbox (a reused V8 context), without the 5 s deadlock
     * timeout; a workflow worker then starts in ~0.3 s instead of the 2–6 s its thread took to
     * load the bundle, which was most of a test stack's start.
     */
    workflowsInMainThread?: boolean;
  } = {},
): Promise<{ workers: Worker[]; connection: NativeConnection; close: () => Promise<void> }> {
  const { config } = deps;
  const connection = opts.connection ?? (await NativeConnection.connect(temporalConnectionOptions(config)));
  const clientConnection = await Connection.connect(temporalConnectionOptions(config));
  const temporal = new Client({ connection: clientConnection, namespace: config.temporal.namespace });
  const activities = createActivities({ ...deps, temporal });
  const workers: Worker[] = [];
  /** One worker on `taskQueue`: every activity (each queue runs only what is sent to it), with metrics. */
  const worker = (taskQueue: string, options: Omit<WorkerOptions, 'connection' | 'namespace' | 'taskQueue' | 'activities' | 'interceptors'>) =>
    Worker.create({ connection, namespace: config.temporal.namespace, taskQueue, activities, interceptors: { activity: [activityMetrics, mediaClassByPriority] }, ...options });
  if (roles.includes('workflow')) {
    const code = opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath };
    workers.push(await worker(config.temporal.taskQueue, { ...code, ...(opts.workflowsInMainThread ? { debugMode: true } : {}) }));
  }
  if (roles.includes('transcode')) {
    workers.push(
      await worker(config.temporal.transcodeQueue, {
        maxConcurrentActivityTaskExecutions: config.temporal.transcodeConcurrency,
        // Heartbeats are what carry a cancellation to ffmpeg. By default they are flushed at 0.8x
        // the heartbeat timeout (24 s at 30 s): a deleted video would keep encoding that long.
        maxHeartbeatThrottleInterval: '3 seconds',
      }),
    );
    // Temporal's priority orders queued tasks but never pre-empts a running one: with every slot
    // above encoding, a new video's probe would wait for an encode to end (minutes). The short
    // steps to `ready` (workflows/video/lanes.ts) queue here instead, on slots no encode takes;
    // they run un-niced beside the niced encodes (lib/media/tools.ts), so they also get the CPU.
    // TEMPORAL_CRITICAL_QUEUE set to the transcode queue turns the lane off (priority alone).
    if (config.temporal.criticalQueue !== config.temporal.transcodeQueue) {
      workers.push(
        await worker(config.temporal.criticalQueue, {
          maxConcurrentActivityTaskExecutions: config.temporal.criticalConcurrency,
          maxHeartbeatThrottleInterval: '3 seconds',
        }),
      );
    }
  }
  if (roles.includes('live')) {
    // One heartbeating session per broadcast (SPEC §17); each holds one ffmpeg for its whole length.
    workers.push(
      await worker(config.live.queue, {
        maxConcurrentActivityTaskExecutions: config.live.concurrency,
        // Cancellation (complete, disconnect) reaches the session with its next heartbeat flush.
        maxHeartbeatThrottleInterval: '1 second',
      }),
    );
  }
  return {
    workers,
    connection,
    close: async () => {
      await clientConnection.close();
      if (!opts.connection) await connection.close();
    },
  };
}
