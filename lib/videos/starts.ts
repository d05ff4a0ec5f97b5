import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Config } from '../config';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { type Fairness, fairness } from '../../workflows/priority';
import { initialStatus, type VideoRef, videoWorkflowOptions, type WorkflowQueues } from './workflow';

/**
 * The start outbox (migration workflow_start_outbox). A new video's workflow start is written by
 * the statement that creates the video, and made after the client has its answer:
 *
 * - the process that created the video starts it at once (`kick`), in batches, so `POST
 *   /upload/init` costs one transaction instead of a Temporal round trip, and an init while
 *   Temporal is down is accepted and started when it is back (no 503, no lost upload);
 * - the row carries a lease (`next_attempt_at`); if its process dies first, or the start fails,
 *   any API process's sweep takes it once the lease or its backoff has lapsed;
 * - a start is idempotent: the workflow id is the video's and the start rejects any earlier run
 *   of that id, so a start made twice (a sweep racing the creator, a retry after a lost answer)
 *   or after the video's deletion already ran its workflow is a no-op, and the row is dropped;
 * - whoever needs the workflow before the outbox got to it (completing the upload) starts it
 *   itself with `startPending`.
 */

/** What a row holds: plain data, rebuilt into the start options by whoever makes the start. */
export interface PendingStart {
  ref: VideoRef;
  status: string;
  queues: WorkflowQueues;
  /** SPEC §25: the workspace's fairness when the video was made (absent in rows written before it). */
  fair?: Fairness;
}

interface Row {
  video_id: string;
  start: PendingStart;
}

const TABLE = 'video_workflow_starts';
/** How long the creating (or sweeping) process has to make the start before a sweep may take it. */
const LEASE_MS = 5_000;
const MAX_BACKOFF_MS = 60_000;
const BATCH = 50;

/** The Temporal cluster a row is for: a process only starts rows of the cluster it talks to. */
export const startTarget = (config: Config) => `${config.temporal.address}/${config.temporal.namespace}`;

/**
 * The outbox row of a new video's workflow start, for the statement that creates the video
 * (vidhost_create_video, which writes it under the creator's lease).
 */
export function pendingStart(config: Config, ref: VideoRef, fair: Fairness): { target: string; start: PendingStart; leaseMs: number } {
  const { taskQueue, transcodeQueue, criticalQueue, heartbeatTimeoutMs } = config.temporal;
  return { target: startTarget(config), start: { ref, status: initialStatus(ref.source), queues: { taskQueue, transcodeQueue, criticalQueue, heartbeatTimeoutMs }, fair }, leaseMs: LEASE_MS };
}

type Outcome = 'started' | 'failed';

async function startOne(temporal: Client, s: PendingStart): Promise<Outcome> {
  try {
    await temporal.workflow.start('videoWorkflow', { ...videoWorkflowOptions(s.queues, s.ref, s.status, s.fair ?? fairness(s.ref.workspaceId, null)), workflowIdReusePolicy: 'REJECT_DUPLICATE' });
    return 'started';
  } catch (err) {
    // Started already (by a sweep, a deletion's signalWithStart, an earlier attempt whose answer was lost).
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'started';
    throw err;
  }
}

/**
 * Starts rows and settles them: a start made drops its row, a failed one backs off
 * (1 s, 2 s, 4 s … 60 s, counted by the row's `attempts`) for the next sweep.
 */
async function startRows(db: Db, temporal: Client, log: Logger, rows: Row[]): Promise<void> {
  if (!rows.length) return;
  let firstErr: unknown;
  const outcomes = await Promise.all(
    rows.map((r) =>
      startOne(temporal, r.start).catch((err): Outcome => {
        firstErr ??= err;
        return 'failed';
      }),
    ),
  );
  const started = rows.filter((_, i) => outcomes[i] === 'started').map((r) => r.video_id);
  const failed = rows.filter((_, i) => outcomes[i] === 'failed');
  if (started.length) await db(TABLE).whereIn('video_id', started).delete();
  if (failed.length) {
    const message = String((firstErr as Error)?.message ?? firstErr).slice(0, 500);
    log.warn({ err: firstErr, videos: failed.length }, 'could not start video workflows; they will be retried');
    await db(TABLE)
      .whereIn('video_id', failed.map((r) => r.video_id))
      .update({
        attempts: db.raw('attempts + 1'),
        last_error: message,
        next_attempt_at: db.raw(`now() + least(${MAX_BACKOFF_MS}, 1000 * power(2, least(attempts, 16))) * interval '1 millisecond'`),
      });
  }
}

/**
 * Starts one video's pending workflow now, if it has one (idempotent). True when there was a
 * pending start and the workflow now exists; throws what Temporal threw when it could not start.
 */
export async function startPending(db: Db, temporal: Client, videoId: string): Promise<boolean> {
  const row = await db(TABLE).where({ video_id: videoId }).first('start');
  if (!row) return false;
  await startOne(temporal, row.start as PendingStart);
  await db(TABLE).where({ video_id: videoId }).delete();
  return true;
}

/** The per-process side of the outbox: starts what this process created, and sweeps what others left. */
export class WorkflowStarter {
  private readonly pending = new Map<string, PendingStart>();
  /** Ids in a batch this process is starting now. */
  private readonly starting = new Set<string>();
  private inFlight = 0;
  private readonly batches = new Set<Promise<void>>();
  private readonly sweepTimer: NodeJS.Timeout;
  private sweeping: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly temporal: Client,
    private readonly config: Config,
    private readonly log: Logger,
    sweepMs = 1000,
  ) {
    this.sweepTimer = setInterval(() => {
      this.sweeping ??= this.sweep().finally(() => (this.sweeping = undefined));
    }, sweepMs).unref();
  }

  /** Call after the statement that wrote the start has committed, with what it wrote. */
  kick(videoId: string, start: PendingStart): void {
    if (this.closed) return;
    this.pending.set(videoId, start);
    this.pump();
  }

  /** Up to two batches in flight; what arrives meanwhile waits and goes in the next one. */
  private pump(): void {
    while (this.inFlight < 2 && this.pending.size && !this.closed) {
      const rows: Row[] = [];
      for (const [video_id, start] of this.pending) {
        if (rows.length === BATCH) break;
        rows.push({ video_id, start });
        this.pending.delete(video_id);
      }
      this.inFlight++;
      const p = this.startBatch(rows)
        .catch((err) => this.log.warn({ err }, 'workflow start batch failed; the sweep will retry'))
        .finally(() => {
          this.inFlight--;
          this.batches.delete(p);
          this.pump();
        });
      this.batches.add(p);
    }
  }

  private async startBatch(rows: Row[]): Promise<void> {
    for (const r of rows) this.starting.add(r.video_id);
    try {
      await startRows(this.db, this.temporal, this.log, rows);
    } finally {
      for (const r of rows) this.starting.delete(r.video_id);
    }
  }

  /** Takes due rows of this cluster (skipping ones another process holds) under a fresh lease, and starts them. */
  private async sweep(): Promise<void> {
    try {
      for (;;) {
        if (this.closed) return;
        const { rows } = (await this.db.raw(
          `update ${TABLE} s set next_attempt_at = now() + interval '${LEASE_MS} milliseconds'
             from (select video_id from ${TABLE} where target = ? and next_attempt_at <= now()
                   order by next_attempt_at limit ${BATCH} for update skip locked) due
            where s.video_id = due.video_id
           returning s.video_id, s.start`,
          [startTarget(this.config)],
        )) as { rows: Row[] };
        if (!rows.length) return;
        // Under a burst of inits, rows wait in this process longer than their lease. The sweep
        // takes those over (its update renewed their lease) rather than start them a second
        // time, and leaves alone the ones a batch of this process is starting now.
        for (const r of rows) this.pending.delete(r.video_id);
        await this.startBatch(rows.filter((r) => !this.starting.has(r.video_id)));
        if (rows.length < BATCH) return;
      }
    } catch (err) {
      this.log.debug({ err }, 'workflow start sweep failed');
    }
  }

  /** Stops sweeping and lets the batches in flight settle (bounded: Temporal's own deadline). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    await Promise.allSettled([...this.batches, this.sweeping]);
  }
}
