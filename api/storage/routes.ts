import type Router from '@koa/router';
import { LocalStorage } from '../../lib/storage';
import type { Deps } from '../deps';
import { conflict, notFound } from '../errors';
import { setUploadCors } from './cors';

/** 409 `upload_closed`: the URL was used, or its video moved on or is gone (SPEC §12). */
export const uploadClosed = () =>
  conflict('upload_closed', 'This upload URL is closed: the upload was completed, or the video is no longer waiting for an upload or was deleted');

/** Throws `upload_closed` unless the video still waits for its upload. */
export async function assertUploadOpen(deps: Deps, videoId: string): Promise<void> {
  const row = await deps.db('videos').where({ id: videoId }).first('status', 'deleted_at', 'upload_closed_at');
  if (!row || row.deleted_at || row.upload_closed_at || row.status !== 'pending_upload') throw uploadClosed();
}

/** An added audio track's upload (api/audio/routes.ts): open while its row waits for the file. */
const isTrackUpload = (key: string) => /\/audio-x-[A-Za-z0-9-]+-[^/]+$/.test(key);
async function assertTrackUploadOpen(deps: Deps, videoId: string, key: string): Promise<void> {
  const row = await deps.db('audio_tracks as a').join('videos as v', 'v.id', 'a.video_id').where({ 'a.video_id': videoId, 'a.upload_key': key }).first('a.status', 'v.deleted_at');
  if (!row || row.deleted_at || row.status !== 'pending_upload') throw uploadClosed();
}

/** The origin a video's upload URL answers browsers with; null (= `*`) for unknown tokens. */
async function corsOriginOf(deps: Deps, storage: LocalStorage, token: string): Promise<string | null> {
  try {
    const claims = await storage.verifyUploadToken(token);
    if (!claims.vid) return null;
    const row = await deps.db('videos').where({ id: claims.vid }).first('cors_origin');
    return row?.cors_origin ?? null;
  } catch {
    return null;
  }
}

/** The local driver's upload URLs land here (S3 uploads go straight to the bucket). */
export function storageRoutes(r: Router, deps: Deps): void {
  const local = () => {
    if (!(deps.storage instanceof LocalStorage)) throw notFound();
    return deps.storage;
  };

  // The preflight carries no credential but the URL itself; it always succeeds, so the browser
  // gets to see the PUT's own answer (403 expired, 409 closed…) rather than a network error.
  r.options('/storage/upload/:token', async (ctx) => {
    setUploadCors(ctx, await corsOriginOf(deps, local(), ctx.params.token), { preflight: true });
    ctx.status = 204;
  });

  r.put('/storage/upload/:token', async (ctx) => {
    const storage = local();
    // Set before the upload runs, so that errors are readable by the page too.
    setUploadCors(ctx, await corsOriginOf(deps, storage, ctx.params.token), { preflight: false });
    const lengthHeader = ctx.get('content-length');
    const target = await storage.verifyUploadToken(ctx.params.token).then((c) => c.key, () => '');
    const { key, size } = await storage.acceptUpload(
      ctx.params.token,
      ctx.get('content-type') || undefined,
      lengthHeader ? Number(lengthHeader) : undefined,
      ctx.req,
      (videoId) => (isTrackUpload(target) ? assertTrackUploadOpen(deps, videoId, target) : assertUploadOpen(deps, videoId)),
    );
    ctx.status = 200;
    ctx.body = { key, size };
  });
}
