import type { Middleware } from 'koa';
import type { ReadCache } from '../../lib/videos/readCache';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Read-your-writes in this process: a request that may have changed its workspace drops the
 * workspace's cached reads before it answers, instead of leaving the client a window until the
 * trigger's notification arrives. (Other processes rely on the notification: milliseconds.)
 */
export function dropReadsOnWrite(reads: ReadCache): Middleware {
  return async (ctx, next) => {
    if (SAFE.has(ctx.method)) return next();
    try {
      await next();
    } finally {
      const ws = ctx.state.auth?.workspaceId;
      if (ws) reads.dropWorkspace(ws);
    }
  };
}
