import type { Middleware } from 'koa';
import { httpDuration, uploadsCompleted, uploadsCreated } from '../../lib/metrics/registry';

// Route templates that create a video, and the form each stands for.
const CREATES: Record<string, string> = {
  'POST /upload/init': 'init',
  'POST /upload/presigned': 'presigned',
  'POST /upload/from-url': 'from_url',
  'POST /upload/tus': 'tus',
};

/**
 * Latency by route template: `/videos/:id`, never the raw path (one series per video would
 * drown Prometheus). Unmatched paths share one label.
 */
export const requestMetrics: Middleware = async (ctx, next) => {
  const end = httpDuration.startTimer();
  try {
    await next();
  } finally {
    const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
    const status = ctx.status;
    end({ method: ctx.method, route: String(route), status: String(status) });
    const replayed = ctx.response.get('Idempotent-Replayed') === 'true';
    const key = `${ctx.method} ${String(route)}`;
    if (!replayed && status >= 200 && status < 300) {
      if (CREATES[key]) uploadsCreated.inc({ form: CREATES[key] });
      if (key === 'POST /upload/complete' && status === 202) uploadsCompleted.inc();
    }
  }
};
