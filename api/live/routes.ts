// `/v1/live-streams` (SPEC §17). Creating a stream starts its entity workflow (workflows/live/stream.ts);
// complete, disable and delete signal it and ask the live edge to drop the encoder.
import type Router from '@koa/router';
import { newId, parseId } from '../../lib/ids';
import { dropEncoder } from '../../lib/live/control';
import { hashStreamKey, newStreamKey } from '../../lib/live/keys';
import { edgeStreamStats } from '../../lib/live/edge';
import { edgeHealth, LIVE_SELECT, type LiveStreamRow, loadLiveStream, recentVideoIds, serializeLiveStream, type SimulcastTarget } from '../../lib/live/read';
import { ensureLiveWorkflow } from '../../lib/live/workflow';
import { assertPublicUrl, UrlNotAllowedError } from '../../lib/net/guard';
import { uniqueTagNames } from '../../lib/tags';
import { completeSignal, deleteLiveSignal, liveWorkflowId } from '../../workflows/live/defs';
import { fairness } from '../../workflows/priority';
import type { Deps } from '../deps';
import { badRequest, notFound } from '../errors';
import { assertFolderOf } from '../folders/assert';
import { auth, requireOwner } from '../middleware/auth';
import { assertEncryptionConfigured, assertRestrictionOf } from '../restrictions/routes';
import { parseBody, parseQuery } from '../middleware/validate';
import { watermarkForNew } from '../watermarks/assert';
import { createLiveBody, listLiveQuery, patchLiveBody } from './schema';

/** Simulcast targets pass the same address guard as webhook URLs (SPEC §9, §17). */
async function checkTargets(deps: Deps, targets: SimulcastTarget[]): Promise<SimulcastTarget[]> {
  for (const [i, t] of targets.entries()) {
    try {
      await assertPublicUrl(t.url, deps.config.allowLoopbackUrls, ['rtmp:', 'rtmps:']);
    } catch (err) {
      if (err instanceof UrlNotAllowedError) throw badRequest('url_not_allowed', `simulcast_targets[${i}].url: ${err.message}`);
      throw err;
    }
  }
  return targets;
}

function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify({ t: createdAt, i: id })).toString('base64url');
}

function decodeCursor(text: string): { t: string; i: string } {
  try {
    const c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (typeof c.t === 'string' && typeof c.i === 'string' && parseId('ls', c.i) && !Number.isNaN(Date.parse(c.t))) return c;
  } catch {
    /* fall through */
  }
  throw badRequest('invalid_cursor', 'cursor is not a cursor returned by this endpoint');
}

export function liveRoutes(r: Router, deps: Deps): void {
  const { db, config, temporal } = deps;

  const find = async (workspaceId: string, id: string): Promise<LiveStreamRow> => {
    const lid = parseId('ls', id);
    const row = lid ? await loadLiveStream(db, lid, workspaceId) : undefined;
    if (!row) throw notFound('Live stream');
    return row;
  };
  const answer = async (row: LiveStreamRow, streamKey?: string) => {
    const recent = await recentVideoIds(db, [row.id]);
    const out = serializeLiveStream(config, row, recent.get(row.id) ?? [], streamKey);
    // SPEC §22: an SRT or WHIP publisher is measured by the live edge itself (fresher, and it sees
    // the publisher before the media server does); an edge out of reach leaves the stored measure.
    const protocol = out.health?.protocol;
    if (protocol === 'srt' || protocol === 'whip') {
      const e = await edgeStreamStats(config, row.id, 1000).catch(() => null);
      if (e && (e.video || e.bitrate_kbps)) out.health = edgeHealth(e, protocol);
    }
    return out;
  };
  const signal = async (id: string, fn: (h: ReturnType<typeof temporal.workflow.getHandle>) => Promise<void>) => {
    try {
      await fn(temporal.workflow.getHandle(liveWorkflowId(id)));
    } catch (err) {
      // No running workflow means no broadcast to end: nothing to tell it.
      if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
    }
  };

  r.post('/live-streams', async (ctx) => {
    const { workspaceId } = auth(ctx);
    const body = parseBody(ctx, createLiveBody);
    // Where a broadcast is sent beyond the workspace is an owner's decision, as webhooks are.
    if (body.simulcast_targets?.length) requireOwner(ctx);
    const targets = await checkTargets(deps, body.simulcast_targets ?? []);
    const settings = body.new_video_settings ?? {};
    if (settings.folder_id) await assertFolderOf(db, workspaceId, settings.folder_id, 'folder_id');
    if (settings.tags) settings.tags = uniqueTagNames(settings.tags);
    const restrictionId = body.playback_restriction_id != null ? await assertRestrictionOf(db, workspaceId, body.playback_restriction_id, 'playback_restriction_id') : null;
    if (body.encryption === 'aes-128') assertEncryptionConfigured(deps, 'encryption');
    // SPEC §24: the profile named, none for null, else the workspace's default (as for uploads).
    const watermarkId = await watermarkForNew(db, workspaceId, body.watermark_id);
    const key = newStreamKey();
    const id = newId('ls');
    await db('live_streams').insert({
      id,
      workspace_id: workspaceId,
      title: body.title ?? '',
      visibility: body.visibility ?? 'unlisted',
      latency_mode: body.latency_mode,
      reconnect_window: body.reconnect_window,
      record: body.record,
      new_video_settings: JSON.stringify(settings),
      simulcast_targets: JSON.stringify(targets),
      passthrough: body.passthrough ?? null,
      playback_restriction_id: restrictionId,
      // Unset: the workspace's default_encryption (a database trigger, as for videos).
      encryption: body.encryption,
      stream_key_hash: hashStreamKey(key),
      watermark_id: watermarkId,
    });
    await ensureLiveWorkflow(temporal, config, id, workspaceId, fairness(workspaceId, auth(ctx).plan));
    ctx.status = 201;
    ctx.body = await answer((await loadLiveStream(db, id))!, key);
  });

  r.get('/live-streams', async (ctx) => {
    const { workspaceId } = auth(ctx);
    const p = parseQuery(ctx, listLiveQuery);
    const q = db('live_streams as l').select(db.raw(LIVE_SELECT)).where('l.workspace_id', workspaceId).whereNull('l.deleted_at');
    if (p.status) q.where('l.status', p.status);
    if (p.cursor) {
      const c = decodeCursor(p.cursor);
      q.whereRaw('(l.created_at, l.id) < (?::timestamptz, ?)', [c.t, c.i]);
    }
    const rows: LiveStreamRow[] = await q.orderBy([{ column: 'l.created_at', order: 'desc' }, { column: 'l.id', order: 'desc' }]).limit(p.limit + 1);
    const page = rows.slice(0, p.limit);
    const recent = await recentVideoIds(db, page.map((x) => x.id));
    const last = page[page.length - 1];
    ctx.body = {
      data: page.map((x) => serializeLiveStream(config, x, recent.get(x.id) ?? [])),
      has_more: rows.length > p.limit,
      next_cursor: rows.length > p.limit && last ? encodeCursor(last.created_at_text!, last.id) : null,
    };
  });

  r.get('/live-streams/:id', async (ctx) => {
    ctx.body = await answer(await find(auth(ctx).workspaceId, ctx.params.id));
  });

  r.patch('/live-streams/:id', async (ctx) => {
    const { workspaceId } = auth(ctx);
    const row = await find(workspaceId, ctx.params.id);
    const body = parseBody(ctx, patchLiveBody);
    const patch: Record<string, unknown> = { updated_at: db.fn.now() };
    if (body.title !== undefined) patch.title = body.title;
    if (body.visibility !== undefined) patch.visibility = body.visibility;
    if (body.latency_mode !== undefined) patch.latency_mode = body.latency_mode;
    if (body.reconnect_window !== undefined) patch.reconnect_window = body.reconnect_window;
    if (body.record !== undefined) patch.record = body.record;
    if (body.passthrough !== undefined) patch.passthrough = body.passthrough;
    if (body.encryption !== undefined) {
      if (body.encryption === 'aes-128') assertEncryptionConfigured(deps, 'encryption');
      // From the next broadcast: the one going on keeps its recording's setting and key.
      patch.encryption = body.encryption;
    }
    // Takes effect on the next viewer request (the CDN's live routes read it per request).
    if (body.playback_restriction_id !== undefined) {
      patch.playback_restriction_id = body.playback_restriction_id === null ? null : await assertRestrictionOf(db, workspaceId, body.playback_restriction_id, 'playback_restriction_id');
    }
    if (body.simulcast_targets !== undefined) {
      // Owners only (docs/dashboard.md, "Roles"): a member could otherwise send a private broadcast anywhere.
      requireOwner(ctx);
      patch.simulcast_targets = JSON.stringify(await checkTargets(deps, body.simulcast_targets));
    }
    if (body.new_video_settings !== undefined) {
      const s = body.new_video_settings;
      if (s.folder_id) await assertFolderOf(db, workspaceId, s.folder_id, 'folder_id');
      if (s.tags) s.tags = uniqueTagNames(s.tags);
      patch.new_video_settings = JSON.stringify(s);
    }
    await db('live_streams').where({ id: row.id }).update(patch);
    ctx.body = await answer((await loadLiveStream(db, row.id))!);
  });

  r.delete('/live-streams/:id', async (ctx) => {
    const row = await find(auth(ctx).workspaceId, ctx.params.id);
    await db('live_streams').where({ id: row.id }).update({ deleted_at: db.fn.now(), updated_at: db.fn.now() });
    await dropEncoder(config, row.id, 'live stream deleted');
    await signal(row.id, (h) => h.signal(deleteLiveSignal));
    ctx.status = 204;
  });

  // A new key at once; an encoder on the old key is dropped (it could not reconnect with it anyway).
  r.post('/live-streams/:id/reset-stream-key', async (ctx) => {
    const row = await find(auth(ctx).workspaceId, ctx.params.id);
    const key = newStreamKey();
    await db('live_streams').where({ id: row.id }).update({ stream_key_hash: hashStreamKey(key), updated_at: db.fn.now() });
    await dropEncoder(config, row.id, 'stream key reset');
    ctx.body = await answer((await loadLiveStream(db, row.id))!, key);
  });

  // End the broadcast now: the recording is finished without waiting for the reconnect window.
  r.post('/live-streams/:id/complete', async (ctx) => {
    const row = await find(auth(ctx).workspaceId, ctx.params.id);
    // Ending is final (SPEC §22): a WHIP publisher's retries are refused from here (api/cdn/realtime.ts).
    await db('live_streams').where({ id: row.id }).update({ publish_ended_at: db.fn.now() });
    await signal(row.id, (h) => h.signal(completeSignal, { reason: 'completed' }));
    await dropEncoder(config, row.id, 'completed');
    ctx.body = await answer(row);
  });

  r.post('/live-streams/:id/disable', async (ctx) => {
    const row = await find(auth(ctx).workspaceId, ctx.params.id);
    await db('live_streams').where({ id: row.id }).update({ disabled: true, publish_ended_at: db.fn.now(), updated_at: db.fn.now() });
    await signal(row.id, (h) => h.signal(completeSignal, { reason: 'disabled' }));
    await dropEncoder(config, row.id, 'disabled');
    ctx.body = await answer((await loadLiveStream(db, row.id))!);
  });

  r.post('/live-streams/:id/enable', async (ctx) => {
    const row = await find(auth(ctx).workspaceId, ctx.params.id);
    await db('live_streams').where({ id: row.id }).update({ disabled: false, updated_at: db.fn.now() });
    ctx.body = await answer((await loadLiveStream(db, row.id))!);
  });
}
