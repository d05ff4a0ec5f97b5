import { registry, videosByStatus, workflowStartOldestSeconds, workflowStartsPending, workflowStartsRetrying } from '../../lib/metrics/registry';
import { startTarget } from '../../lib/videos/starts';
import type { Deps } from '../deps';

/**
 * The API process's Prometheus text: its registry, with the gauges read from Postgres at scrape
 * time. Served on its own port by lib/metrics/serve.ts (API_METRICS_PORT), never on the public
 * API: the counts span every workspace.
 */
export async function apiMetricsText(deps: Pick<Deps, 'db' | 'config'>): Promise<string> {
  const rows: Array<{ status: string; n: string }> = await deps
    .db('videos')
    .whereNull('deleted_at')
    .groupBy('status')
    .select('status', deps.db.raw('count(*) as n'));
  videosByStatus.reset();
  for (const status of ['pending_upload', 'processing', 'ready', 'failed']) videosByStatus.set({ status }, 0);
  for (const row of rows) videosByStatus.set({ status: row.status }, Number(row.n));
  // The start outbox: a backlog that grows or ages means Temporal is not taking starts.
  const { rows: outbox } = await deps.db.raw(
    `select count(*) as n, count(*) filter (where attempts > 0) as retrying,
            coalesce(extract(epoch from now() - min(created_at)), 0) as oldest
       from video_workflow_starts where target = ?`,
    [startTarget(deps.config)],
  );
  workflowStartsPending.set(Number(outbox[0].n));
  workflowStartsRetrying.set(Number(outbox[0].retrying));
  workflowStartOldestSeconds.set(Number(outbox[0].oldest));
  return registry.metrics();
}
