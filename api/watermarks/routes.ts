import type Router from '@koa/router';
import type { Knex } from 'knex';
import { newId, parseId } from '../../lib/ids';
import { UrlNotAllowedError } from '../../lib/net/guard';
import { DEFAULT_PLACEMENT } from '../../lib/media/watermark';
import { fetchImage } from '../../lib/watermarks/fetch';
import { inspectImage, WatermarkImageError } from '../../lib/watermarks/image';
import { watermarkKey, type WatermarkRow } from '../../lib/watermarks/store';
import type { Deps } from '../deps';
import { ApiError, badRequest, notFound } from '../errors';
import { auth, requireOwner } from '../middleware/auth';
import { parseBody, parseQuery } from '../middleware/validate';
import { assertWatermarkOf } from './assert';
import { createWatermarkBody, createWatermarkQuery, patchWatermarkDefaultsBody } from './schema';

export const serializeWatermark = (w: WatermarkRow) => ({
  id: w.id,
  name: w.name,
  content_type: w.content_type,
  width: w.width,
  height: w.height,
  size_bytes: w.size_bytes,
  position: w.position,
  padding: Number(w.padding),
  scale: Number(w.scale),
  opacity: Number(w.opacity),
  created_at: new Date(w.created_at).toISOString(),
});

async function findWatermark(db: Knex, workspaceId: string, id: string): Promise<WatermarkRow> {
  const wid = parseId('wm', id);
  const row = wid ? await db<WatermarkRow>('watermarks').where({ id: wid, workspace_id: workspaceId }).whereNull('deleted_at').first() : undefined;
  if (!row) throw notFound('Watermark');
  return row;
}

const asApiError = (err: unknown): unknown => (err instanceof WatermarkImageError ? new ApiError(err.status, err.code, err.message) : err);

/**
 * Watermark profiles (SPEC §24, docs/watermarks.md). The image is judged from its bytes before
 * anything is stored; then the image is stored and the row written, and an image whose row
 * could not be written is removed: a refused or failed request leaves nothing behind.
 */
export function watermarkRoutes(r: Router, deps: Deps): void {
  const { db, storage, config } = deps;

  r.post('/watermarks', async (ctx) => {
    requireOwner(ctx);
    const { workspaceId } = auth(ctx);
    let image: Buffer;
    let placement;
    if (Buffer.isBuffer(ctx.state.image)) {
      image = ctx.state.image;
      placement = parseQuery(ctx, createWatermarkQuery);
    } else {
      if (ctx.get('content-type') && !/json/i.test(ctx.get('content-type'))) {
        throw new ApiError(415, 'unsupported_image_type', 'Send the image as image/png or image/jpeg, or JSON { "url": … }');
      }
      const body = parseBody(ctx, createWatermarkBody);
      const { url, ...rest } = body;
      placement = rest;
      try {
        image = await fetchImage(url, { allowLoopback: config.allowLoopbackUrls });
      } catch (err) {
        if (err instanceof UrlNotAllowedError) throw badRequest('url_not_allowed', `The URL cannot be fetched: ${err.message}`);
        if (err instanceof WatermarkImageError) throw asApiError(err);
        if (err instanceof TypeError) throw badRequest('url_not_allowed', `The URL cannot be fetched: ${err.message}`);
        throw badRequest('url_fetch_failed', `The URL could not be fetched: ${(err as Error).message}`);
      }
    }
    let facts;
    try {
      facts = inspectImage(image);
    } catch (err) {
      throw asApiError(err);
    }
    const id = newId('wm');
    const key = watermarkKey(workspaceId, id, facts.format === 'png' ? 'png' : 'jpg');
    await storage.put(key, image, { contentType: facts.contentType });
    let row: WatermarkRow;
    try {
      [row] = await db<WatermarkRow>('watermarks')
        .insert({
          id,
          workspace_id: workspaceId,
          name: placement.name ?? null,
          storage_key: key,
          content_type: facts.contentType,
          width: facts.width,
          height: facts.height,
          size_bytes: image.length,
          position: placement.position ?? DEFAULT_PLACEMENT.position,
          padding: placement.padding ?? DEFAULT_PLACEMENT.padding,
          scale: placement.scale ?? DEFAULT_PLACEMENT.scale,
          opacity: placement.opacity ?? DEFAULT_PLACEMENT.opacity,
        })
        .returning('*');
    } catch (err) {
      await storage.deletePrefix(key).catch(() => undefined);
      throw err;
    }
    ctx.status = 201;
    ctx.body = serializeWatermark(row);
  });

  r.get('/watermarks', async (ctx) => {
    const rows = await db<WatermarkRow>('watermarks').where({ workspace_id: auth(ctx).workspaceId }).whereNull('deleted_at').orderBy([{ column: 'created_at' }, { column: 'id' }]).limit(1000);
    ctx.body = { data: rows.map(serializeWatermark) };
  });

  r.get('/watermarks/:id', async (ctx) => {
    ctx.body = serializeWatermark(await findWatermark(db, auth(ctx).workspaceId, ctx.params.id));
  });

  // The image itself, as it was sent (its type judged from its bytes at creation): what a client
  // or the dashboard shows beside the placement. Private: it is the workspace's own upload.
  r.get('/watermarks/:id/image', async (ctx) => {
    const row = await findWatermark(db, auth(ctx).workspaceId, ctx.params.id);
    const object = await storage.get(row.storage_key);
    if (!object) throw notFound('Watermark image');
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = row.content_type;
    ctx.length = row.size_bytes;
    ctx.body = object.body;
  });

  // A profile in use can be deleted (SPEC §24): videos already made keep their mark, so the row
  // and image stay (deleted_at) for their later encodes; it is no longer listed nor accepted.
  r.delete('/watermarks/:id', async (ctx) => {
    requireOwner(ctx);
    const { workspaceId } = auth(ctx);
    const found = await findWatermark(db, workspaceId, ctx.params.id);
    await db.transaction(async (tx) => {
      await tx('watermarks').where({ id: found.id }).update({ deleted_at: tx.fn.now() });
      await tx('workspaces').where({ id: workspaceId, default_watermark_id: found.id }).update({ default_watermark_id: null });
    });
    ctx.status = 204;
  });

  const readDefaults = async (workspaceId: string) => {
    const w = await db('workspaces').where({ id: workspaceId }).first('default_watermark_id');
    return { default_watermark_id: w?.default_watermark_id ?? null };
  };

  r.get('/watermark-defaults', async (ctx) => {
    ctx.body = await readDefaults(auth(ctx).workspaceId);
  });

  r.patch('/watermark-defaults', async (ctx) => {
    requireOwner(ctx);
    const { workspaceId } = auth(ctx);
    const body = parseBody(ctx, patchWatermarkDefaultsBody);
    const id = body.default_watermark_id === null ? null : await assertWatermarkOf(db, workspaceId, body.default_watermark_id, 'default_watermark_id');
    await db('workspaces').where({ id: workspaceId }).update({ default_watermark_id: id });
    ctx.body = await readDefaults(workspaceId);
  });
}
