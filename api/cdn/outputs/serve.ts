import { pipeline } from 'node:stream/promises';
import type { ParameterizedContext } from 'koa';
import type { BandwidthMeter } from '../../../lib/playback/bandwidth';
import type { PlaybackVideo } from '../../../lib/playback/access';
import type { ByteRange, Storage } from '../../../lib/storage';
import { ApiError, notFound } from '../../errors';
import { parseRange } from '../range';

export interface ServeOptions {
  contentType: string;
  cacheControl: string;
  /** `Content-Disposition`, e.g. for downloads. */
  disposition?: string;
  headers?: Record<string, string>;
}

/** Streams one stored object with Range/206/416 and HEAD, counting the bytes that left storage. */
export async function serveObject(
  ctx: ParameterizedContext,
  deps: { storage: Storage },
  meter: BandwidthMeter,
  video: PlaybackVideo,
  key: string,
  opts: ServeOptions,
): Promise<void> {
  const found = () => {
    ctx.set('Accept-Ranges', 'bytes');
    ctx.set('Cache-Control', opts.cacheControl);
    if (opts.disposition) ctx.set('Content-Disposition', opts.disposition);
    for (const [k, v] of Object.entries(opts.headers ?? {})) ctx.set(k, v);
    ctx.type = opts.contentType;
  };
  const rangeHeader = ctx.get('range');
  let range: ByteRange | undefined;
  if (rangeHeader || ctx.method === 'HEAD') {
    const info = await deps.storage.head(key);
    if (!info) throw notFound('File');
    if (ctx.method === 'HEAD') {
      found();
      ctx.status = 200;
      ctx.length = info.size;
      return;
    }
    const want = parseRange(rangeHeader, info.size);
    if (want.kind === 'unsatisfiable') {
      throw new ApiError(416, 'range_not_satisfiable', `The range is outside the file's ${info.size} bytes`, undefined, { 'Content-Range': `bytes */${info.size}` });
    }
    if (want.kind === 'range') range = want;
  }
  const object = await deps.storage.get(key, range);
  if (!object) throw notFound('File');
  found();
  ctx.status = range ? 206 : 200;
  if (range) ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${object.size}`);
  ctx.length = range ? range.end - range.start + 1 : object.size;
  ctx.respond = false;
  let sent = 0;
  object.body.on('data', (chunk: Buffer) => (sent += chunk.length));
  try {
    await pipeline(object.body, ctx.res);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') ctx.state.log?.warn({ err, key }, 'CDN stream failed');
  } finally {
    meter.record(video.workspace_id, video.month, sent);
  }
}
