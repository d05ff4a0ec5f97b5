// SPEC §25: a workspace's fairness (workflows/priority.ts) where no request carries its plan.
import type { Db } from './db';
import { type Fairness, fairness } from '../workflows/priority';

/** Keyed by the workspace, weighted by its plan now (a deleted workspace weighs as Free). */
export async function workspaceFairness(db: Db, workspaceId: string): Promise<Fairness> {
  const row: { plan: string } | undefined = await db('workspaces').where({ id: workspaceId }).first('plan');
  return fairness(workspaceId, row?.plan);
}
