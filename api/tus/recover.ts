import type { VideoRow } from '../../lib/videos/read';
import type { BaseDeps } from '../deps';
import { completeUpload } from '../upload/complete';

/**
 * Completes tus uploads whose last byte arrived but whose completion did not reach the workflow
 * (the API died between the two, or Temporal was down then). A finished upload is one whose
 * staging object has every declared byte: local, the file is whole; S3, the multipart upload was
 * completed (the object exists only then). Safe to run anywhere and often: completion is idempotent.
 */
export async function recoverTusUploads(deps: BaseDeps): Promise<number> {
  const { db, storage, config, log } = deps;
  const since = new Date(Date.now() - (config.upload.urlTtlSeconds + config.upload.graceSeconds) * 1000);
  const rows: VideoRow[] = await db('videos')
    .where({ upload_protocol: 'tus', status: 'pending_upload' })
    .whereNull('deleted_at')
    .where('created_at', '>', since)
    .select('*');
  let completed = 0;
  for (const row of rows) {
    if (!row.upload_key) continue;
    try {
      const head = await storage.head(row.upload_key);
      if (!head || head.size !== Number(row.size_bytes)) continue;
      const { started } = await completeUpload(deps, row);
      if (started) {
        completed++;
        log.info({ videoId: row.id }, 'recovered a finished tus upload');
      }
    } catch (err) {
      log.warn({ err, videoId: row.id }, 'could not complete a finished tus upload; will try again');
    }
  }
  return completed;
}

/** At boot, then every `intervalMs`: a completion lost with a crashed API is found by any API. */
export function startTusRecovery(deps: BaseDeps, intervalMs = 30_000): () => void {
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = running.then(() => recoverTusUploads(deps)).catch((err) => deps.log.warn({ err }, 'tus recovery pass failed'));
  };
  tick();
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
