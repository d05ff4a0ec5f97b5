import { pipeline } from 'node:stream/promises';
import type { ParameterizedContext } from 'koa';
import type { CachedFile } from '../../lib/playback/fileCache';
import type { ByteRange, Storage } from '../../lib/storage';
import { ApiError, notFound } from '../errors';
import { etagMatches } from './files';
import { parseRange } from './range';

/**
 * The one place a CDN file is answered from (the HLS files of ./routes.ts and the SPEC §14
 * outputs of ./outputs/serve.ts): If-None-Match → 304, HEAD, Range → 206 or 416, else 200.
 * `found` sets the caller's headers (type, caching, disposition) once the object is known to
 * exist, with its ETag; `sent` gets the body bytes that left, for the bandwidth meter.
 */
export interface StreamAnswer {
  found: (etag: string | undefined) => void;
  sent: (bytes: number) => void;
}

function unsatisfiable(size: number): ApiError {
  return new ApiError(416, 'range_not_satisfiable', `The range is outside the file's ${size} bytes`, undefined, { 'Content-Range': `bytes */${size}` });
}

function notModified(ctx: ParameterizedContext, etag: string | undefined): boolean {
  const ifNoneMatch = ctx.get('if-none-match');
  return !!ifNoneMatch && !!etag && etagMatches(ifNoneMatch, etag);
}

/** The same answers as from storage, from a file held in memory (a rewritten playlist, a cached or encrypted segment). */
export function answerFromMemory(ctx: ParameterizedContext, file: CachedFile, o: StreamAnswer): void {
  ctx.set('Accept-Ranges', 'bytes');
  o.found(file.etag);
  if (notModified(ctx, file.etag)) {
    ctx.status = 304;
    return;
  }
  const size = file.body.length;
  if (ctx.method === 'HEAD') {
    ctx.status = 200;
    ctx.length = size;
    return;
  }
  const want = parseRange(ctx.get('range'), size);
  if (want.kind === 'unsatisfiable') throw unsatisfiable(size);
  if (want.kind === 'range') {
    ctx.status = 206;
    ctx.set('Content-Range', `bytes ${want.start}-${want.end}/${size}`);
    ctx.body = file.body.subarray(want.start, want.end + 1);
  } else {
    ctx.status = 200;
    ctx.body = file.body;
  }
  const bytes = (ctx.body as Buffer).length;
  if (bytes > 0) ctx.res.once('finish', () => o.sent(bytes));
}

/** Streams one stored object; 404 when it is not there. */
export async function streamObject(ctx: ParameterizedContext, storage: Storage, key: string, o: StreamAnswer): Promise<void> {
  const rangeHeader = ctx.get('range');
  let range: ByteRange | undefined;
  // Plain GETs go straight to the stream; only conditional, ranged and HEAD requests stat first.
  if (rangeHeader || ctx.get('if-none-match') || ctx.method === 'HEAD') {
    const info = await storage.head(key);
    if (!info) throw notFound('File');
    const fresh = notModified(ctx, info.etag);
    if (fresh || ctx.method === 'HEAD') {
      ctx.set('Accept-Ranges', 'bytes');
      o.found(info.etag);
      ctx.status = fresh ? 304 : 200;
      if (!fresh) ctx.length = info.size;
      return;
    }
    const want = parseRange(rangeHeader, info.size);
    if (want.kind === 'unsatisfiable') throw unsatisfiable(info.size);
    if (want.kind === 'range') range = want;
  }
  const object = await storage.get(key, range);
  if (!object) throw notFound('File');
  ctx.set('Accept-Ranges', 'bytes');
  o.found(object.etag);
  ctx.status = range ? 206 : 200;
  if (range) ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${object.size}`);
  ctx.length = range ? range.end - range.start + 1 : object.size;
  // Players abort downloads all the time (seeks, quality switches). Koa would log each one as
  // an error, so the body is piped here, and only the bytes that left storage are counted.
  ctx.respond = false;
  let sent = 0;
  object.body.on('data', (chunk: Buffer) => (sent += chunk.length));
  try {
    await pipeline(object.body, ctx.res);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') ctx.state.log?.warn({ err, key }, 'CDN stream failed');
  } finally {
    o.sent(sent);
  }
}
