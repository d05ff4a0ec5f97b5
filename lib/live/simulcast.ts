// Simulcast (SPEC §17): during a broadcast, one ffmpeg per target copies the feed (no re-encode)
// to the target's RTMP(S) URL. A failing target is retried every few seconds and reported in the
// stream's read (`simulcast_targets[].status/error`); it never touches the broadcast itself.
import type { Config } from '../config';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { assertPublicUrl } from '../net/guard';
import { redactSecrets } from '../redact';
import { startLiveFfmpeg } from './feed';
import type { SimulcastTarget } from './read';

export function targetUrl(t: SimulcastTarget): string {
  return t.stream_key ? `${t.url.replace(/\/+$/, '')}/${t.stream_key}` : t.url;
}

async function report(db: Db, liveStreamId: string, i: number, status: string, error: string | null): Promise<void> {
  await db.raw(`update live_streams set simulcast_status = simulcast_status || jsonb_build_object(?::text, jsonb_build_object('status', ?::text, 'error', ?::text)) where id = ?`, [
    String(i),
    status,
    error,
    liveStreamId,
  ]);
}

/** Starts the pushes; `stop()` ends them and marks every target idle. */
export function startSimulcast(deps: { config: Config; db: Db; log: Logger }, liveStreamId: string, feed: string, targets: SimulcastTarget[], retryMs = 3000): { stop: () => Promise<void> } {
  const { config, db, log } = deps;
  let stopped = false;
  const running = new Set<() => void>();
  const errored = new Set<number>();
  const loops = targets.map(async (t, i) => {
    while (!stopped) {
      let error: string;
      try {
        // Checked again at push time: a name may resolve elsewhere than when the target was saved.
        await assertPublicUrl(t.url, config.allowLoopbackUrls, ['rtmp:', 'rtmps:']);
        await report(db, liveStreamId, i, 'connecting', null);
        const args = ['-hide_banner', '-loglevel', 'error', '-rw_timeout', '5000000', '-protocol_whitelist', 'rtmp,rtmps,tcp,tls', '-format_whitelist', 'flv,live_flv', '-i', feed, '-map', '0', '-c', 'copy', '-f', 'flv', targetUrl(t)];
        const ff = await startLiveFfmpeg(config, args, feed);
        running.add(ff.stop);
        // Live once it has been pushing for a moment without failing.
        const live = setTimeout(() => {
          errored.delete(i);
          void report(db, liveStreamId, i, 'live', null).catch(() => undefined);
        }, 2000);
        const { code, stderr } = await ff.exited;
        clearTimeout(live);
        running.delete(ff.stop);
        if (stopped) break;
        error = stderr.trim().split('\n').pop() || `ffmpeg exited with code ${code}`;
      } catch (err) {
        error = (err as Error).message;
      }
      // ffmpeg names the output URL, stream key included: the key is the third party's credential,
      // and this error is shown to read-only keys and members and written to the log.
      error = redactSecrets(error, [targetUrl(t), t.stream_key]).slice(0, 300);
      log.info({ liveStreamId, target: i, error }, 'live: simulcast target errored');
      errored.add(i);
      await report(db, liveStreamId, i, 'errored', error).catch(() => undefined);
      await new Promise((r) => setTimeout(r, retryMs));
    }
  });
  return {
    async stop() {
      stopped = true;
      for (const stop of running) stop();
      await Promise.allSettled(loops);
      // A target that was failing when the broadcast ended keeps its error in the read.
      await Promise.all(targets.map((_, i) => (errored.has(i) ? undefined : report(db, liveStreamId, i, 'idle', null).catch(() => undefined))));
    },
  };
}
