// A ladder chunk's progress, signalled to its video's workflow (issue 47: `progress` stayed 0
// while a long source's chunks encoded, since only a single-chunk source signalled). Signals land
// in the workflow's history, so each chunk sends few: one per `step` points, at most every 2 s,
// with the step growing with the number of chunks (each chunk is a smaller share of the whole):
// about 50 signals a group however long the source, plus at most two a chunk.
import type { Client } from '@temporalio/client';
import { Context } from '@temporalio/activity';
import type { Logger } from '../../lib/logger';
import { ladderProgressSignal } from '../../workflows/video/defs';

export type ChunkProgress = { chunk: number; chunks: number };

/** Points of a chunk's own progress between two signals. */
export const progressStep = (chunks: number): number => Math.min(50, Math.max(2, chunks * 2));

export function ladderProgressReporter(temporal: Client, log: Logger, rungs: string[], at: ChunkProgress | undefined, now = Date.now): ((pct: number) => void) | undefined {
  const workflowId = Context.current().info.workflowExecution?.workflowId;
  if (!at || !workflowId) return undefined;
  const handle = temporal.workflow.getHandle(workflowId);
  const step = progressStep(at.chunks);
  let last = 0;
  let lastAt = 0;
  return (pct) => {
    const t = now();
    if (pct >= 100 || pct - last < step || t - lastAt < 2000) return;
    last = pct;
    lastAt = t;
    handle.signal(ladderProgressSignal, { rungs, chunk: at.chunk, progress: pct }).catch((err) => log.debug({ err }, 'progress signal failed'));
  };
}
