import client from 'prom-client';

/**
 * The process's metrics (SPEC §16). One registry per process: the API and each worker expose
 * their own at GET /metrics. Names are `vidhost_*`; Temporal's SDK adds `temporal_*` on workers.
 */
export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry, prefix: 'vidhost_' });

export const httpDuration = new client.Histogram({
  name: 'vidhost_http_request_duration_seconds',
  help: 'API request latency by route template (not raw path) and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const uploadsCreated = new client.Counter({
  name: 'vidhost_uploads_created_total',
  help: 'Videos created by an upload or import call, by form (init, presigned, from_url, tus)',
  labelNames: ['form'] as const,
  registers: [registry],
});

export const uploadsCompleted = new client.Counter({
  name: 'vidhost_uploads_completed_total',
  help: 'Upload completions that started processing (complete, confirm)',
  registers: [registry],
});

export const videosByStatus = new client.Gauge({
  name: 'vidhost_videos',
  help: 'Videos by status (read from Postgres at scrape time)',
  labelNames: ['status'] as const,
  registers: [registry],
});

/** The start outbox (lib/videos/starts.ts) for this deployment's Temporal cluster, read at scrape time. */
export const workflowStartsPending = new client.Gauge({
  name: 'vidhost_workflow_starts_pending',
  help: "New videos whose workflow start is still in the start outbox (this deployment's Temporal cluster)",
  registers: [registry],
});

export const workflowStartsRetrying = new client.Gauge({
  name: 'vidhost_workflow_starts_retrying',
  help: 'Of those, starts that failed at least once and wait for their backoff (last_error says why)',
  registers: [registry],
});

export const workflowStartOldestSeconds = new client.Gauge({
  name: 'vidhost_workflow_start_oldest_seconds',
  help: 'Age of the oldest start still in the outbox (0 when it is empty)',
  registers: [registry],
});

export const transcodeSeconds = new client.Histogram({
  name: 'vidhost_transcode_seconds',
  help: 'Wall time of one rendition (encode and upload), by rung',
  labelNames: ['rung'] as const,
  buckets: [1, 2, 5, 10, 30, 60, 120, 300, 600, 1200, 3600],
  registers: [registry],
});

export const transcodeSpeed = new client.Histogram({
  name: 'vidhost_transcode_speed_ratio',
  help: 'Seconds of media per second of wall time for one rendition (1 = real time), by rung',
  labelNames: ['rung'] as const,
  buckets: [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64],
  registers: [registry],
});

export const activityFailures = new client.Counter({
  name: 'vidhost_activity_failures_total',
  help: 'Activity attempts that failed, by activity type and error type',
  labelNames: ['activity', 'error'] as const,
  registers: [registry],
});

export const webhookDeliveries = new client.Counter({
  name: 'vidhost_webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome (succeeded, retry, failed, cancelled, error)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Issue 28 (SPEC §21): each rendition's measured quality against the source scaled to the rung. */
export const renditionSsim = new client.Histogram({
  name: 'vidhost_rendition_ssim_db',
  help: 'Measured SSIM (dB, −10·log10(1−SSIM)) of a finished rendition against the scaled source, by rung',
  labelNames: ['rung'] as const,
  buckets: [8, 10, 12, 14, 16, 18, 20, 22, 25, 30, 40],
  registers: [registry],
});

export const renditionPsnr = new client.Histogram({
  name: 'vidhost_rendition_psnr_db',
  help: 'Measured PSNR (dB) of a finished rendition against the scaled source, by rung',
  labelNames: ['rung'] as const,
  buckets: [25, 30, 33, 36, 38, 40, 42, 45, 50, 60],
  registers: [registry],
});

export const renditionsBelowQualityFloor = new client.Counter({
  name: 'vidhost_renditions_below_quality_floor_total',
  help: 'Renditions whose measured SSIM is under QUALITY_FLOOR_SSIM_DB (reported, kept), by rung',
  labelNames: ['rung'] as const,
  registers: [registry],
});

export const analyticsEventsDropped = new client.Counter({
  name: 'vidhost_analytics_events_dropped_total',
  help: 'Accepted beacon events never written: `refused` (the database refused the row for its content; quarantined), `overflow` (the buffer was full while the database was unreachable)',
  labelNames: ['reason'] as const,
  registers: [registry],
});
