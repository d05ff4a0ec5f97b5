import type Router from '@koa/router';
import { registry, videosByStatus } from '../../lib/metrics/registry';
import type { Deps } from '../deps';

/** `GET /metrics`, Prometheus text. Key-less like /healthz: keep it off the public edge. */
export function metricsRoutes(r: Router, deps: Deps): void {
  r.get('/metrics', async (ctx) => {
    const rows: Array<{ status: string; n: string }> = await deps
      .db('videos')
      .whereNull('deleted_at')
      .groupBy('status')
      .select('status', deps.db.raw('count(*) as n'));
    videosByStatus.reset();
    for (const status of ['pending_upload', 'processing', 'ready', 'failed']) videosByStatus.set({ status }, 0);
    for (const row of rows) videosByStatus.set({ status: row.status }, Number(row.n));
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
}
