import type Router from '@koa/router';
import { loadRelations, serializeVideo, type VideoRow } from '../../lib/videos/read';
import { queryVideoState } from '../../lib/videos/workflow';
import { retryUpdate, videoWorkflowId } from '../../workflows/defs';
import type { Deps } from '../deps';
import { conflict } from '../errors';
import { auth } from '../middleware/auth';
import { parseQuery } from '../middleware/validate';
import { updateError } from '../upload/routes';
import { findVideo } from './find';
import { applyListQuery, encodeCursor, listQuery } from './list';

/** One video in its read shape; while it is being processed the workflow's query supplies live state. */
export async function readVideo(deps: Deps, row: VideoRow) {
  const { renditions, tags } = await loadRelations(deps.db, [row.id]);
  const rends = renditions.get(row.id) ?? [];
  // Ready videos may still be adding higher rungs; ask the workflow until the ladder is done.
  const working = row.status === 'processing' || row.status === 'pending_upload' || rends.some((r) => r.status === 'queued' || r.status === 'processing');
  const live = working ? await queryVideoState(deps.temporal, row.id) : undefined;
  return serializeVideo(deps.config, row, rends, tags.get(row.id) ?? [], live);
}

export function videoRoutes(r: Router, deps: Deps): void {
  r.get('/videos', async (ctx) => {
    const params = parseQuery(ctx, listQuery);
    const rows: Array<VideoRow & { created_at_text: string }> = await applyListQuery(
      deps.db('videos as v').select('v.*', deps.db.raw(`to_char(v.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as created_at_text`)),
      params,
      auth(ctx).workspaceId,
    );
    const page = rows.slice(0, params.limit);
    const { renditions, tags } = await loadRelations(deps.db, page.map((v) => v.id));
    const last = page[page.length - 1];
    const hasMore = rows.length > params.limit;
    ctx.body = {
      data: page.map((v) => serializeVideo(deps.config, v, renditions.get(v.id) ?? [], tags.get(v.id) ?? [])),
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeCursor(last.created_at_text, last.id) : null,
    };
  });

  r.get('/videos/:id', async (ctx) => {
    ctx.body = await readVideo(deps, await findVideo(ctx, deps, ctx.params.id));
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
