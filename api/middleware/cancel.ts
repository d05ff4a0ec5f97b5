import type { Middleware } from 'koa';
import { cancelScope, runCancellable, type Db } from '../../lib/db';

/**
 * A request whose client goes away before its answer takes its running statements with it
 * (issue 45: an analytics read that outlived its HTTP request by 28 minutes). Its queries run in a
 * cancellable scope (lib/db.ts); when the response closes unfinished, Postgres is asked to cancel
 * those still running, and the request ends like any cancelled statement (57014 → 503, which no
 * one receives). API_STATEMENT_TIMEOUT_MS bounds the rest.
 */
export function cancelQueriesOnClose(db: Db): Middleware {
  return async (ctx, next) => {
    const { result, running } = runCancellable(next);
    const res = ctx.res;
    const onClose = () => {
      if (res.writableFinished || running.size === 0) return;
      cancelScope(db, running).then(
        (n) => n && ctx.state.log?.warn({ cancelled: n }, 'client went away; its running queries were cancelled'),
        (err: unknown) => ctx.state.log?.warn({ err }, 'could not cancel the queries of a request whose client went away'),
      );
    };
    res.once('close', onClose);
    try {
      await result;
    } finally {
      // Koa writes the body after the chain: from here on no query of this request runs.
      res.off('close', onClose);
    }
  };
}
