import type Router from '@koa/router';
import { monthOf } from '../../lib/playback/bandwidth';
import { limitsOf } from '../../lib/plans';
import type { Deps } from '../deps';
import { auth } from '../middleware/auth';

const MONTHS = 6;

/** `GET /usage`: storage and this month's bandwidth against the plan, and the last months' bandwidth. */
export function usageRoutes(r: Router, deps: Deps): void {
  const { db } = deps;
  r.get('/usage', async (ctx) => {
    const { workspaceId, plan } = auth(ctx);
    const now = new Date();
    const months = Array.from({ length: MONTHS }, (_, i) => monthOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (MONTHS - 1 - i), 1))));
    const [[storage], rows] = await Promise.all([
      db('videos').where({ workspace_id: workspaceId }).whereNull('deleted_at').select(db.raw('coalesce(sum(size_bytes), 0)::bigint as used'), db.raw('count(*)::int as videos')),
      db('bandwidth_usage').where({ workspace_id: workspaceId }).where('month', '>=', months[0]).select(db.raw("to_char(month, 'YYYY-MM-DD') as month"), 'bytes'),
    ]);
    const byMonth = new Map(rows.map((x: { month: string; bytes: number }) => [x.month, Number(x.bytes)]));
    const limits = limitsOf(plan);
    const history = months.map((m) => ({ month: m.slice(0, 7), bytes: byMonth.get(m) ?? 0 }));
    ctx.body = {
      workspace_id: workspaceId,
      plan,
      storage: { used_bytes: Number(storage.used), limit_bytes: limits.storageBytes, videos: storage.videos },
      bandwidth: { month: history[MONTHS - 1].month, used_bytes: history[MONTHS - 1].bytes, limit_bytes: limits.monthlyBandwidthBytes },
      bandwidth_history: history,
    };
  });
}
