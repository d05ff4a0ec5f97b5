import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Logger } from '../lib/logger';
import { activityFailures, registry, transcodeSeconds, transcodeSpeed, webhookDeliveries } from '../lib/metrics/registry';
import { type MetricsServer, serveMetrics } from '../lib/metrics/serve';

const errorType = (err: unknown) => {
  const e = err as { type?: string; name?: string };
  return e?.type ?? e?.name ?? 'Error';
};

type EncodeInput = {
  rung?: { name?: string };
  rungs?: Array<{ name?: string }>;
  chunk?: { start: number; end: number | null };
  durationSeconds?: number | null;
};

/**
 * The rungs an encode activity made and the media seconds it covered: one rung for the legacy
 * transcodeRendition, a group of rungs from one decode for an encodeChunk (its chunk's span).
 */
function encodedBy(activity: string, arg: unknown): Array<{ rung: string; mediaSeconds: number | null }> {
  const p = (arg ?? {}) as EncodeInput;
  if (activity === 'transcodeRendition') return [{ rung: p.rung?.name ?? 'unknown', mediaSeconds: p.durationSeconds ?? null }];
  const end = p.chunk?.end ?? p.durationSeconds ?? null;
  const mediaSeconds = end !== null && p.chunk ? end - p.chunk.start : null;
  return (p.rungs ?? []).map((r) => ({ rung: r.name ?? 'unknown', mediaSeconds }));
}

/**
 * Measures activities from the outside, so activity code stays about its work: failures by
 * activity and error type, transcode time and speed per rung, webhook attempts by outcome.
 */
export const activityMetrics: ActivityInterceptorsFactory = (ctx: Context) => ({
  inbound: {
    async execute(input, next) {
      const activity = ctx.info.activityType;
      const started = process.hrtime.bigint();
      try {
        const result = await next(input);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        if (activity === 'transcodeRendition' || activity === 'encodeChunk') {
          for (const { rung, mediaSeconds } of encodedBy(activity, input.args[0])) {
            transcodeSeconds.observe({ rung }, seconds);
            if (mediaSeconds && seconds > 0) transcodeSpeed.observe({ rung }, mediaSeconds / seconds);
          }
        }
        if (activity === 'deliverWebhook') webhookDeliveries.inc({ outcome: (result as { status?: string })?.status ?? 'unknown' });
        return result;
      } catch (err) {
        activityFailures.inc({ activity, error: errorType(err) });
        if (activity === 'deliverWebhook') webhookDeliveries.inc({ outcome: 'error' });
        throw err;
      }
    },
  },
});

/**
 * The worker's GET /metrics: its own registry, followed by the Temporal SDK's runtime metrics
 * when Core exports them on `temporalUrl` (one scrape target per worker process).
 */
export function workerMetrics(opts: { port: number; host: string; token?: string; temporalUrl?: string; log: Logger }): Promise<MetricsServer | undefined> {
  return serveMetrics({
    ...opts,
    async collect() {
      const text = await registry.metrics();
      if (!opts.temporalUrl) return text;
      const core = await fetch(opts.temporalUrl).then((r) => (r.ok ? r.text() : ''), () => '');
      return `${text}\n${core}`;
    },
  });
}
