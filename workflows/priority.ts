// SPEC §25 fair share (docs/fairness.md): the priority levels and the per-workspace fairness of
// every workflow and activity, in one place. Pure and sandbox-safe: workflows, the API, the
// activities and the workers all import it.
import type { Priority as TemporalPriority } from '@temporalio/common';
import { PLANS, type Plan } from '../lib/plans';

/**
 * Temporal priority keys (1 runs first; the server's default `matching.priorityLevels` is 5 and
 * an unset key means 3). Each level is a sub-queue: a queued task of a lower number is dispatched
 * before any of a higher one. Running tasks are never pre-empted (docs/fairness.md).
 */
export const Priority = {
  /** Between `complete` and `ready`: promote, probe/plan, keyframe index, thumbnail, playlists, status. */
  critical: 1,
  /** Asked for by a person who waits for it: an alignment, an added audio track, a deletion's cleanup. */
  onRequest: 2,
  /** Temporal's own default: bookkeeping nobody waits on in particular (webhooks, rollups). */
  normal: 3,
  /** Behind `ready`: the ladder, the audio group, materialising, extra codecs, MP4s and storyboards. */
  bulk: 4,
  /** Reported, never awaited: measured quality. */
  background: 5,
} as const;

export type PriorityLevel = (typeof Priority)[keyof typeof Priority];

/**
 * A workspace's share of the workers within a level, by plan: tasks of a key are dispatched in
 * proportion to its weight while several keys have tasks queued; a lone key gets everything.
 */
export const PLAN_WEIGHTS: Readonly<Record<Plan, number>> = { free: 1, starter: 2, pro: 4, business: 8 };

export interface Fairness {
  /** The workspace id: one virtual queue per workspace (at most 64 bytes; ours are 28). */
  fairnessKey: string;
  fairnessWeight: number;
}

/** The fairness of a workspace on a plan; an unknown plan weighs as Free. */
export function fairness(workspaceId: string, plan: string | null | undefined): Fairness {
  const known = (PLANS as readonly string[]).includes(plan ?? '') ? (plan as Plan) : 'free';
  return { fairnessKey: workspaceId, fairnessWeight: PLAN_WEIGHTS[known] };
}

/** A Temporal priority: the level, and the workspace's fairness when known. */
export function priority(level: PriorityLevel, fair?: Partial<Fairness>): TemporalPriority {
  return {
    priorityKey: level,
    ...(fair?.fairnessKey ? { fairnessKey: fair.fairnessKey } : {}),
    ...(fair?.fairnessWeight ? { fairnessWeight: fair.fairnessWeight } : {}),
  };
}

/**
 * In a workflow: the fairness its start carried (`workflowInfo().priority`, from the history, so
 * replay-safe), else the workspace with Free's weight. Runs started before fair share carry none;
 * their activities still queue under their workspace.
 */
export function inheritedFairness(started: TemporalPriority | undefined, workspaceId: string): Fairness {
  return { fairnessKey: started?.fairnessKey || workspaceId, fairnessWeight: started?.fairnessWeight || PLAN_WEIGHTS.free };
}

/** Work at `level` and above runs at full CPU; below it, niced (lib/media/tools.ts `background`). */
export const isForeground = (priorityKey: number | undefined): boolean => priorityKey !== undefined && priorityKey <= Priority.onRequest;
