// `{cdn_url}/live/<ls_id|token>/…` (SPEC §17): the live multivariant playlist, each rung's sliding
// window (written per request from live_segments rows, with EXT-X-PROGRAM-DATE-TIME stamped at
// ingest), and the segments, which are the broadcast's recording's own files in storage.
// SPEC §20: the stream's restriction on every request; an `aes-128` broadcast's media playlists
// get #EXT-X-KEY and its segments are encrypted here with the recording's key (the video path's
// code, lib/protection/hls.ts), and `<token>/key` gives that key to a playback token of the
// recording only (a token's subject is the broadcast whose recording it names). A token's `ip`
// claim holds on every file, and its `max_resolution` lists and serves only the rungs up to it
// (GET /v1/playback/{ls_id} mints such tokens: api/playback/live.ts).
import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { parseId } from '../../lib/ids';
import { livePlaylist, masterPlaylist, measuredBandwidth, type SegmentRow } from '../../lib/live/playlists';
import { mountPath } from '../../lib/playback/urls';
import { liveRestriction, liveRestrictionColumn } from '../../lib/live/restriction';
import { verifyPlaybackToken } from '../../lib/playback/tokens';
import { encryptedSegment, restrictedCacheControl, rungRefusal, viewerRefusal } from '../../lib/protection/enforce';
import { encryptedMediaPlaylist, rungShortSide } from '../../lib/protection/hls';
import { videoContentKey } from '../../lib/protection/keys';
import { selfOriginsOf } from '../../lib/protection/restriction';
import { keys } from '../../lib/storage';
import type { Deps } from '../deps';
import { forbidden, notFound } from '../errors';
import type { Broadcast } from './broadcast';
import { CDN_EXPOSE_HEADERS, REALTIME_EXPOSE_HEADERS } from './files';
import { lowLatencyCdnRoutes, lowLatencyMaster } from './lowlatency';
import { readWhole, viewerOf } from './protected';

const PLAYLIST = 'application/vnd.apple.mpegurl';
const RUNG_RE = /^(?:[1-9][0-9]{1,4}p|source)$/;
const SEG_RE = /^seg_[0-9]{6}\.ts$/;

/**
 * Who may watch a broadcast (SPEC §17, §20), shared by its HLS, LL-HLS and WHEP routes:
 * `resolve` judges the subject (stream id or playback token) on the current rows, `assertRung`
 * a token's `max_resolution` on one rung.
 */
export function liveBroadcastResolver(deps: Deps) {
  const { db, config } = deps;
  const self = selfOriginsOf(config);

  /** The broadcast going on (or the one just ended, until its recording is finished). */
  async function resolve(ctx: ParameterizedContext, subject: string): Promise<Broadcast> {
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Access-Control-Expose-Headers', CDN_EXPOSE_HEADERS);
    const id = parseId('ls', subject);
    // Not a stream id: a playback token of a broadcast's recording (the live embed page mints one
    // for an encrypted broadcast; GET /v1/playback/{recording} too). A bad token is no stream.
    const grant = id ? null : await verifyPlaybackToken(config.playback, subject);
    if (!id && !grant) throw notFound('Live stream');
    const q = db('live_streams as l').whereNull('l.deleted_at');
    if (id) q.where('l.id', id);
    else q.where('l.active_video_id', grant!.videoUuid);
    const ls = await q.first(
      'l.id', 'l.workspace_id', 'l.visibility', 'l.active_video_id', 'l.latency_mode', 'l.watermark_id', liveRestrictionColumn(db),
      db.raw(`(select v.encryption from videos v where v.id = l.active_video_id) as encryption`),
    );
    if (!ls) throw notFound('Live stream');
    // A private stream plays only with a token of its recording.
    if (ls.visibility === 'private' && !grant) throw forbidden('forbidden', 'This live stream is private');
    // SPEC §20 on every live request (playlists, segments, key): the embedding page's Referer, else
    // Origin, against the stream's restriction, read with the stream's row (no cached decision),
    // and a token's `ip` claim.
    const restriction = liveRestriction(ls.restriction);
    const refused = viewerRefusal({ restriction }, grant, viewerOf(ctx), self);
    if (refused) throw forbidden('playback_restricted', refused);
    if (!ls.active_video_id) throw notFound('Broadcast');
    const seg = ls.latency_mode === 'low' ? config.live.lowLatencySegmentSeconds : config.live.segmentSeconds;
    return {
      liveStreamId: ls.id, latencyMode: ls.latency_mode, workspaceId: ls.workspace_id, videoId: ls.active_video_id, windowSeconds: config.live.windowSeconds, targetFloor: Math.ceil(seg),
      restriction, grant, encrypted: ls.encryption === 'aes-128', marked: Boolean(ls.watermark_id),
    };
  }

  /**
   * A token's `max_resolution` on one rung's playlist and segments (the master lists only rungs up
   * to it). A `source` rung's size is its row's; read only for a capped token.
   */
  async function assertRung(b: Broadcast, rung: string): Promise<void> {
    if (b.grant?.maxResolution === undefined) return;
    let shortSide: number | null = rungShortSide(rung);
    if (shortSide === null) {
      const row = await db('renditions').where({ video_id: b.videoId, name: rung }).first('width', 'height');
      shortSide = row ? Math.min(row.width, row.height) : null;
    }
    const refused = rungRefusal({ short_side: shortSide }, b.grant, rung);
    if (refused) throw forbidden('playback_restricted', refused);
  }

  return { resolve, assertRung };
}

export function liveCdnRoutes(r: Router, deps: Deps): void {
  const { db, config, storage, hot } = deps;
  const base = `${mountPath(config.cdnUrl)}/live/`;
  const { resolve, assertRung } = liveBroadcastResolver(deps);
  // SPEC §22: a low-latency broadcast's LL-HLS playlists and parts (the edge's packager).
  lowLatencyCdnRoutes(r, deps, base, { resolve, assertRung });

  // Preflight for the playlists and (SPEC §22) WHIP/WHEP: browser publishers and players on any origin.
  r.options(`${base}*rest`, (ctx) => {
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Access-Control-Allow-Methods', 'GET, HEAD, POST, DELETE, OPTIONS');
    ctx.set('Access-Control-Allow-Headers', 'Range, If-None-Match, If-Match, Authorization, Content-Type');
    ctx.set('Access-Control-Expose-Headers', REALTIME_EXPOSE_HEADERS);
    ctx.set('Access-Control-Max-Age', '86400');
    ctx.status = 204;
  });

  r.get(`${base}:subject/master.m3u8`, async (ctx) => {
    const b = await resolve(ctx, ctx.params.subject);
    const { rows: rungs } = await db.raw(
      `select r.name, r.width, r.height, r.bitrate,
              (select json_agg(json_build_object('duration', s.duration, 'bytes', s.bytes)) from (
                 select duration, bytes from live_segments s where s.video_id = r.video_id and s.rung = r.name order by seq desc limit 5) s) as recent
         from renditions r where r.video_id = ? and exists (select 1 from live_segments s where s.video_id = r.video_id and s.rung = r.name)`,
      [b.videoId],
    );
    if (!rungs.length) throw notFound('Broadcast');
    // A token's `max_resolution`: only the rungs up to it (short side, so portrait feeds too).
    const max = b.grant?.maxResolution;
    type Row = { name: string; width: number; height: number; bitrate: number; recent: SegmentRow[] | null };
    const listed = max === undefined ? rungs : rungs.filter((x: Row) => Math.min(x.width, x.height) <= max);
    if (!listed.length) throw forbidden('playback_restricted', `This broadcast has no rendition up to ${max}p`);
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = PLAYLIST;
    ctx.body = (await lowLatencyMaster(deps, b)) ?? masterPlaylist(listed.map((x: Row) => ({ ...x, bandwidth: Math.max(x.bitrate, measuredBandwidth(x.recent ?? []) ?? 0) })));
  });

  r.get(`${base}:subject/:rung/index.m3u8`, async (ctx) => {
    if (!RUNG_RE.test(ctx.params.rung)) throw notFound('File');
    const b = await resolve(ctx, ctx.params.subject);
    await assertRung(b, ctx.params.rung);
    const want = Math.max(3, Math.ceil(b.windowSeconds / b.targetFloor));
    const rows: SegmentRow[] = (await db('live_segments').where({ video_id: b.videoId, rung: ctx.params.rung }).orderBy('seq', 'desc').limit(want)).reverse();
    if (!rows.length) throw notFound('File');
    const [{ before, discs }] = (
      await db.raw(`select count(*)::int as before, count(*) filter (where discontinuity)::int as discs from live_segments where video_id = ? and rung = ? and seq < ?`, [b.videoId, ctx.params.rung, rows[0].seq])
    ).rows;
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = PLAYLIST;
    const text = livePlaylist(rows, { mediaSequence: before, discontinuitySequence: discs, targetFloor: b.targetFloor });
    ctx.body = b.encrypted
      ? encryptedMediaPlaylist(text, `${config.cdnUrl}/live/${ctx.params.subject}/key`, await videoContentKey(db, config.protection, b.videoId), ctx.params.rung)
      : text;
  });

  // The AES-128 key of an encrypted broadcast: only to a playback token (never to a bare stream id).
  r.get(`${base}:subject/key`, async (ctx) => {
    const b = await resolve(ctx, ctx.params.subject);
    if (!b.grant) throw forbidden('forbidden', 'The key is given only to a valid playback token of the recording (GET /playback/{id})');
    if (!b.encrypted) throw notFound('Key');
    ctx.set('Cache-Control', 'private, no-store');
    ctx.type = 'application/octet-stream';
    ctx.body = Buffer.from(await videoContentKey(db, config.protection, b.videoId));
  });

  r.get(`${base}:subject/:rung/:file`, async (ctx) => {
    if (!RUNG_RE.test(ctx.params.rung) || !SEG_RE.test(ctx.params.file)) throw notFound('File');
    const b = await resolve(ctx, ctx.params.subject);
    await assertRung(b, ctx.params.rung);
    const path = `${keys.rendition(b.workspaceId, b.videoId, ctx.params.rung)}${ctx.params.file}`;
    // A restricted stream's segments must not be handed to any site by a shared cache.
    ctx.set('Cache-Control', restrictedCacheControl(b, 'public, max-age=60'));
    ctx.type = 'video/mp2t';
    if (b.encrypted) {
      // Whole-segment AES-128-CBC with the IV the playlist names (same as the recording's, so the
      // finished recording on /v/ serves the same bytes). Every viewer asks for the same few
      // segments at the live edge: held by the file cache, a segment's ciphertext is kept beside
      // it (as on /v/), so it is one cipher pass per process, not one per request.
      const cached = await hot.files.get(b.videoId, path);
      const plain = cached ?? (await readWhole(deps, path));
      if (!plain) throw notFound('File');
      const key = await videoContentKey(db, config.protection, b.videoId);
      ctx.body = encryptedSegment(key, ctx.params.rung, ctx.params.file, plain.body, cached !== null);
      return;
    }
    const obj = await storage.get(path);
    if (!obj) throw notFound('File');
    ctx.length = obj.size;
    ctx.body = obj.body;
  });
}
