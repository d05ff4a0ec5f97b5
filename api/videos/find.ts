import type { ParameterizedContext } from 'koa';
import type { Deps } from '../deps';
import { parseVideoId } from '../../lib/ids';
import { loadVideoRow, loadVideoWithRelations, type VideoRow, type VideoWithRelations } from '../../lib/videos/read';
import { notFound } from '../errors';
import { auth } from '../middleware/auth';

/** The caller's video by `vid_…` or UUID; 404 for malformed ids and other workspaces' videos alike. */
export async function findVideo(ctx: ParameterizedContext, deps: Deps, id: string): Promise<VideoRow> {
  const uuid = parseVideoId(id);
  if (!uuid) throw notFound('Video');
  const row = await loadVideoRow(deps.db, uuid, auth(ctx).workspaceId);
  if (!row) throw notFound('Video');
  return row;
}

/** As findVideo, with renditions and tags, still in one query (GET /videos/{id}). */
export async function findVideoRead(ctx: ParameterizedContext, deps: Deps, id: string): Promise<VideoWithRelations> {
  const uuid = parseVideoId(id);
  if (!uuid) throw notFound('Video');
  const row = await loadVideoWithRelations(deps.db, uuid, auth(ctx).workspaceId);
  if (!row) throw notFound('Video');
  return row;
}
