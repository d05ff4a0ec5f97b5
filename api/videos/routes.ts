import type Router from '@koa/router';
import { loadOutputs, type VideoOutputs } from '../../lib/outputs/read';
import { loadRelations, type RenditionView, serializeVideo, VIDEO_WITH_RELATIONS, type VideoRow, type VideoWithRelations } from '../../lib/videos/read';
import { parseVideoId } from '../../lib/ids';
import { queryVideoState } from '../../lib/videos/workflow';
import { retryUpdate, videoWorkflowId } from '../../workflows/video/defs';
import type { Deps } from '../deps';
import { conflict, notFound } from '../errors';
import { auth } from '../middleware/auth';
import { parseQuery } from '../middleware/validate';
import { updateError } from '../upload/routes';
import { findVideo, findVideoRead } from './find';
import { applyListQuery, encodeCursor, listQuery } from './list';

/** One video in its read shape; while it is being processed the workflow's query supplies live state. */
export async function readVideo(deps: Deps, row: VideoRow | VideoWithRelations) {
  return (await readVideoState(deps, row)).body;
}

/** As readVideo, saying whether the video is still working (its state came from the workflow, not the rows). */
async function readVideoState(deps: Deps, row: VideoRow | VideoWithRelations) {
  let rends: RenditionView[];
  let tagNames: string[];
  let outputs: VideoOutputs | undefined;
  if ('renditions' in row) {
    rends = row.renditions;
    tagNames = row.tags;
    outputs = { statics: row.statics, captions: row.captions, audio_tracks: row.audio_tracks };
  } else {
    const [{ renditions, tags }, more] = await Promise.all([loadRelations(deps.db, [row.id]), loadOutputs(deps.db, [row.id])]);
    rends = renditions.get(row.id) ?? [];
    tagNames = tags.get(row.id) ?? [];
    outputs = more.get(row.id);
  }
  // Ready videos may still be adding higher rungs; ask the workflow until the ladder is done.
  const working = row.status === 'processing' || row.status === 'pending_upload' || rends.some((r) => r.status === 'queued' || r.status === 'processing');
  const live = working ? await queryVideoState(deps.temporal, row.id) : undefined;
  return { body: serializeVideo(deps.config, row, rends, tagNames, live, outputs), working };
}

export function videoRoutes(r: Router, deps: Deps): void {
  // Both reads go through the per-process read cache (lib/videos/readCache.ts): the stored value
  // is the JSON as bytes, so a hit is neither a query, a serialization nor a UTF-8 encoding.
  r.get('/videos', async (ctx) => {
    const params = parseQuery(ctx, listQuery);
    const ws = auth(ctx).workspaceId;
    ctx.type = 'application/json';
    ctx.body = await deps.hot.reads.get(ws, null, `list?${ctx.querystring}`, async () => {
      const rows: VideoWithRelations[] = await applyListQuery(deps.db('videos as v').select(deps.db.raw(VIDEO_WITH_RELATIONS)), params, ws);
      const page = rows.slice(0, params.limit);
      const last = page[page.length - 1];
      const hasMore = rows.length > params.limit;
      const body = {
        data: page.map((v) => serializeVideo(deps.config, v, v.renditions, v.tags, undefined, { statics: v.statics, captions: v.captions, audio_tracks: v.audio_tracks })),
        has_more: hasMore,
        next_cursor: hasMore && last ? encodeCursor(last.created_at_text, last.id) : null,
      };
      return { body: Buffer.from(JSON.stringify(body)), cache: true };
    });
  });

  r.get('/videos/:id', async (ctx) => {
    const uuid = parseVideoId(ctx.params.id);
    if (!uuid) throw notFound('Video');
    ctx.type = 'application/json';
    ctx.body = await deps.hot.reads.get(auth(ctx).workspaceId, uuid, uuid, async () => {
      const row = await findVideoRead(ctx, deps, uuid);
      const { body, working } = await readVideoState(deps, row);
      // A video still being processed reads its workflow's live state: never cached.
      return { body: Buffer.from(JSON.stringify(body)), cache: !working };
    });
  });

  r.post('/videos/:id/retry', async (ctx) => {
    const row = await findVideo(ctx, deps, ctx.params.id);
    if (row.status !== 'failed') throw conflict('invalid_state', `Only failed videos can be retried (status: ${row.status})`);
    const head = await deps.storage.head(row.storage_key);
    try {
      await deps.temporal.workflow
        .getHandle(videoWorkflowId(row.id))
        .executeUpdate(retryUpdate, { args: [{ objectSize: head ? head.size : null }] });
    } catch (err) {
      throw updateError(err);
    }
    ctx.status = 202;
    ctx.body = await readVideo(deps, { ...row, status: 'processing' });
  });
}
