import type Router from '@koa/router';
import { TIMED_OUT, within } from '../../lib/timeout';
import type { Deps } from '../deps';

async function probe(fn: () => Promise<unknown>, timeoutMs = 3000): Promise<{ ok: boolean; error?: string }> {
  try {
    if ((await within(fn(), timeoutMs)) === TIMED_OUT) return { ok: false, error: `timed out after ${timeoutMs} ms` };
    return { ok: true };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

export function healthRoutes(r: Router, deps: Deps): void {
  r.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  r.get('/readyz', async (ctx) => {
    const [db, temporal, storage] = await Promise.all([
      probe(() => deps.db.raw('select 1')),
      probe(() => deps.temporal.workflowService.getSystemInfo({})),
      probe(() => deps.storage.check()),
    ]);
    const ok = db.ok && temporal.ok && storage.ok;
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ok' : 'unavailable', checks: { db, temporal, storage } };
  });
}
