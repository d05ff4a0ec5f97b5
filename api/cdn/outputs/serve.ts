import type { ParameterizedContext } from 'koa';
import type { BandwidthMeter } from '../../../lib/playback/bandwidth';
import type { PlaybackVideo } from '../../../lib/playback/access';
import type { Storage } from '../../../lib/storage';
import { streamObject } from '../stream';

export interface ServeOptions {
  contentType: string;
  cacheControl: string;
  /** `Content-Disposition`, e.g. for downloads. */
  disposition?: string;
  headers?: Record<string, string>;
}

/**
 * Streams one stored output file with the HLS files' answers (../stream.ts: ETag and 304,
 * HEAD, Range/206/416), counting the bytes that left storage.
 */
export function serveObject(
  ctx: ParameterizedContext,
  deps: { storage: Storage },
  meter: BandwidthMeter,
  video: PlaybackVideo,
  key: string,
  opts: ServeOptions,
): Promise<void> {
  return streamObject(ctx, deps.storage, key, {
    found: (etag) => {
      ctx.set('Cache-Control', opts.cacheControl);
      if (opts.disposition) ctx.set('Content-Disposition', opts.disposition);
      for (const [k, v] of Object.entries(opts.headers ?? {})) ctx.set(k, v);
      if (etag) ctx.set('ETag', etag);
      ctx.type = opts.contentType;
    },
    sent: (bytes) => meter.record(video.workspace_id, video.month, bytes),
  });
}
