import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Logger } from '../lib/logger';
import { activityFailures, registry, transcodeSeconds, transcodeSpeed, webhookDeliveries } from '../lib/metrics/registry';

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
export async function serveMetrics(opts: { port: number; host: string; temporalUrl?: string; log: Logger }): Promise<{ url: string; close: () => Promise<void> } | undefined> {
  const server = http.createServer(async (req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end('not found\n');
      return;
    }
    try {
      let text = await registry.metrics();
      if (opts.temporalUrl) {
        const core = await fetch(opts.temporalUrl).then((r) => (r.ok ? r.text() : ''), () => '');
        text += `\n${core}`;
      }
      res.writeHead(200, { 'Content-Type': registry.contentType }).end(text);
    } catch (err) {
      opts.log.warn({ err }, 'metrics scrape failed');
      res.writeHead(500).end();
    }
  });
  // A busy port costs the metrics, never the worker.
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (err) => {
      opts.log.warn({ err, port: opts.port }, 'metrics port unavailable; this worker runs without /metrics');
      resolve(false);
    });
    server.listen(opts.port, opts.host, () => resolve(true));
  });
  if (!listening) return undefined;
  const { port } = server.address() as AddressInfo;
  return { url: `http://${opts.host}:${port}/metrics`, close: () => new Promise((r) => server.close(() => r())) };
}
