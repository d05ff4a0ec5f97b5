import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { withMediaClass } from '../lib/media/schedule';
import { isForeground } from '../workflows/priority';

/**
 * SPEC §25 (docs/fairness.md): an activity's Temporal priority also decides how its ffmpeg runs
 * share the CPU. Priority orders only the queue: once a critical task has a slot it still
 * competes with the encodes running beside it, so those run niced (and their autogroup too) and
 * it does not. Activities without a priority keep their own flags.
 */
export const mediaClassByPriority: ActivityInterceptorsFactory = (ctx: Context) => ({
  inbound: {
    execute(input, next) {
      const key = ctx.info.priority?.priorityKey;
      if (key === undefined || key === 0) return next(input);
      return withMediaClass(isForeground(key) ? 'foreground' : 'background', () => next(input));
    },
  },
});
