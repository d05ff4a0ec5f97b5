// SPEC §22, the public WebRTC endpoints, proxied to the live edge's internal HTTP API
// (lib/live/edge.ts) after this side's checks:
// - WHIP (RFC 9725) `{cdn_url}/live/whip`: `POST` an SDP offer with `Authorization: Bearer
//   <stream_key>` (no API key) → 201 answer + `Location: {cdn_url}/live/whip/<session>`; `DELETE`
//   on that resource with the same Bearer key. Trickle ICE is not taken (`PATCH` → 405, and no
//   `Accept-Patch` is sent): every candidate goes in the offer. The key never appears in a URL.
//   Ending is final (SPEC §22): after `complete` or `disable` a publisher's automatic retry
//   (`?resume=1`, which the dashboard studio sends after its first admitted attempt) gets 409
//   `broadcast_ended` until a POST without it (its user starting again).
// - WHEP `{cdn_url}/live/<ls_id|token>/whep`: `POST` a recvonly offer after the same visibility,
//   token and restriction checks as the HLS playlists → 201 + `Location: …/whep/<session>`; `DELETE`.
//   The viewer's address goes to the edge (EDGE_CLIENT_HEADER), whose offer bucket per address
//   answers 429 `too_many_whep_offers` + Retry-After. Each WHEP session is a view in the live
//   stream's analytics from its ICE connection (lib/analytics/whep.ts).
// Refusals keep stable codes whatever the edge's wording; an edge that is down is a 503.
import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { parseId } from '../../lib/ids';
import { EDGE_CLIENT_HEADER, type EdgeAnswer, edgeError, edgeRequest, EdgeUnreachable } from '../../lib/live/edge';
import { hashStreamKey, STREAM_KEY_RE } from '../../lib/live/keys';
import { mountPath } from '../../lib/playback/urls';
import { verifyPlaybackToken } from '../../lib/playback/tokens';
import type { Deps } from '../deps';
import { ApiError, notFound, tooLarge, tooManyBadKeys, unavailable } from '../errors';
import { clientAddress } from '../middleware/client';
import { REALTIME_EXPOSE_HEADERS } from './files';
import { liveBroadcastResolver } from './live';

/** An SDP offer or a trickle fragment: far bigger than any real offer (10,000 candidates are refused here). */
export const MAX_SDP_BYTES = 64 * 1024;
const SESSION_RE = /^[A-Za-z0-9_-]{1,128}$/;

function cors(ctx: ParameterizedContext): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Expose-Headers', REALTIME_EXPOSE_HEADERS);
}

/** The body, if it is `type` and at most MAX_SDP_BYTES; else 415 / 413 / 400. */
async function readSdp(ctx: ParameterizedContext, type: string): Promise<string> {
  const got = (ctx.get('Content-Type') || '').split(';')[0].trim().toLowerCase();
  if (got !== type) throw new ApiError(415, 'unsupported_media_type', `The body must be ${type}`);
  const declared = Number(ctx.get('Content-Length') || 0);
  if (declared > MAX_SDP_BYTES) throw tooLarge(`The body is over ${MAX_SDP_BYTES} bytes`);
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of ctx.req as AsyncIterable<Buffer>) {
    n += c.length;
    if (n > MAX_SDP_BYTES) throw tooLarge(`The body is over ${MAX_SDP_BYTES} bytes`);
    chunks.push(c);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text.trim()) throw new ApiError(400, 'invalid_sdp', 'The body is empty');
  return text;
}

/** The stream key of `Authorization: Bearer <stream_key>` (RFC 9725 §4.5), or 401. */
function streamKeyOf(ctx: ParameterizedContext): string {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('Authorization'));
  if (!m || !STREAM_KEY_RE.test(m[1])) {
    throw new ApiError(401, 'invalid_stream_key', 'WHIP needs the live stream key as `Authorization: Bearer <stream_key>`', undefined, { 'WWW-Authenticate': 'Bearer' });
  }
  return m[1];
}

async function ask(deps: Deps, method: string, path: string, o: { body?: string; contentType?: string; headers?: Record<string, string> } = {}): Promise<EdgeAnswer> {
  try {
    return await edgeRequest(deps.config, method, path, { ...o, timeoutMs: 15_000 });
  } catch (err) {
    if (err instanceof EdgeUnreachable) throw unavailable('The live edge is unavailable; try again shortly');
    throw err;
  }
}

/** The edge's refusals, with this API's codes (its message kept where it gave one). */
function refusal(a: EdgeAnswer, codes: Record<number, [string, string]>): ApiError {
  const known = codes[a.status];
  const why = edgeError(a).message;
  if (known) return new ApiError(a.status, known[0], why ?? known[1], undefined, a.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {});
  if (a.status === 503) return unavailable('The live edge is unavailable; try again shortly');
  if (a.status === 405) return new ApiError(405, 'method_not_allowed', why ?? 'The live edge does not take this request');
  return new ApiError(502, 'live_edge_error', `The live edge answered ${a.status}`);
}

/** The 201 answer of WHIP/WHEP: the SDP, the session resource under `publicBase`, ETag and Link passed on. */
function created(ctx: ParameterizedContext, a: EdgeAnswer, publicBase: string): string {
  const session = (a.headers.get('location') ?? '').split('/').filter(Boolean).pop() ?? '';
  if (!SESSION_RE.test(session)) throw new ApiError(502, 'live_edge_error', 'The live edge gave no session resource');
  ctx.status = 201;
  ctx.set('Location', `${publicBase}/${session}`);
  // No Accept-Patch: trickle ICE is not taken (PATCH answers 405).
  for (const h of ['etag', 'link']) {
    const v = a.headers.get(h);
    if (v) ctx.set(h, v);
  }
  ctx.type = 'application/sdp';
  ctx.body = a.text;
  return session;
}

const WHIP_CODES: Record<number, [string, string]> = {
  400: ['invalid_sdp', 'The offer is not a usable SDP offer (H.264 video and Opus audio)'],
  401: ['invalid_stream_key', 'Unknown stream key'],
  403: ['live_stream_disabled', 'The live stream is disabled'],
  404: ['not_found', 'WHIP session not found'],
  409: ['live_stream_busy', 'The live stream already has a publisher'],
  413: ['payload_too_large', 'The offer is too large'],
  415: ['unsupported_media_type', 'The body must be application/sdp'],
  429: ['live_plan_limit', "The plan's concurrent broadcasts are all in use"],
};
const WHEP_CODES: Record<number, [string, string]> = {
  400: ['invalid_sdp', 'The offer is not a usable recvonly SDP offer'],
  404: ['not_found', 'This broadcast has no WebRTC source right now'],
  409: ['conflict', 'The session cannot be changed'],
  413: ['payload_too_large', 'The offer is too large'],
  415: ['unsupported_media_type', 'The body must be application/sdp'],
  429: ['too_many_viewers', 'This broadcast has as many WebRTC viewers as it takes; play its HLS instead'],
};

export function realtimeCdnRoutes(r: Router, deps: Deps): void {
  const { config, db } = deps;
  const base = `${mountPath(config.cdnUrl)}/live/`;
  const { resolve, assertRung } = liveBroadcastResolver(deps);
  const whipBase = `${config.cdnUrl}/live/whip`;

  /** SPEC §22 abuse bounds: wrong stream keys spend the address's bad-key budget (as bad API keys do); out of it, 429. */
  const badKey = async (ctx: ParameterizedContext, err: unknown): Promise<never> => {
    const d = await deps.hot.badKeys.consume(clientAddress(ctx));
    if (!d.allowed) throw tooManyBadKeys(Math.max(1, Math.ceil((d.resetAt - Date.now()) / 1000)));
    throw err;
  };

  r.post(`${base}whip`, async (ctx) => {
    cors(ctx);
    if (await deps.hot.badKeys.blocked(clientAddress(ctx))) throw tooManyBadKeys(60);
    let key: string;
    try {
      key = streamKeyOf(ctx);
    } catch (err) {
      return badKey(ctx, err);
    }
    const sdp = await readSdp(ctx, 'application/sdp');
    const resume = ctx.query.resume !== undefined;
    const stream = await db('live_streams').where({ stream_key_hash: hashStreamKey(key) }).whereNull('deleted_at').first('id', 'publish_ended_at');
    if (resume && stream?.publish_ended_at) {
      throw new ApiError(409, 'broadcast_ended', 'The broadcast was ended (complete or disable): a retry does not start it again; start a new broadcast');
    }
    const a = await ask(deps, 'POST', `/whip/${key}`, { body: sdp, contentType: 'application/sdp' });
    if (a.status === 401) return badKey(ctx, refusal(a, WHIP_CODES));
    if (a.status !== 201) throw refusal(a, WHIP_CODES);
    // A start (not a retry) lifts the end of the last broadcast: from here its retries resume it.
    if (!resume && stream?.publish_ended_at) await db('live_streams').where({ id: stream.id }).update({ publish_ended_at: null });
    created(ctx, a, whipBase);
  });

  r.delete(`${base}whip/:session`, async (ctx) => {
    cors(ctx);
    const key = streamKeyOf(ctx);
    if (!SESSION_RE.test(ctx.params.session)) throw notFound('WHIP session');
    const a = await ask(deps, 'DELETE', `/whip/${key}/${ctx.params.session}`);
    if (a.status >= 300) throw refusal(a, WHIP_CODES);
    ctx.status = 200;
    ctx.body = '';
  });

  // Trickle ICE is not taken (the edge needs every candidate in the offer): said plainly, not
  // advertised (no Accept-Patch), and the edge is not asked.
  r.patch(`${base}whip/:session`, async (ctx) => {
    cors(ctx);
    throw new ApiError(405, 'trickle_ice_not_supported', 'Trickle ICE (PATCH) is not supported: send every candidate in the offer', undefined, { Allow: 'DELETE' });
  });

  r.post(`${base}:subject/whep`, async (ctx) => {
    const b = await resolve(ctx, ctx.params.subject);
    cors(ctx);
    // WHEP carries the publisher's own picture: a token capped below it gets HLS only.
    await assertRung(b, 'source');
    const sdp = await readSdp(ctx, 'application/sdp');
    // SPEC §24: a watermarked stream's viewers get only the marked WebRTC rendition, never the
    // source (503 until it runs). With the rendition off (LIVE_WEBRTC_RENDITION=off) none will
    // come: the edge gives what it can carry of the source (an RTMP/SRT source's video, no AAC).
    const which = b.marked ? '?rendition=required' : config.live.webrtcRendition ? '' : '?rendition=off';
    const a = await ask(deps, 'POST', `/whep/${b.liveStreamId}${which}`, { body: sdp, contentType: 'application/sdp', headers: { [EDGE_CLIENT_HEADER]: clientAddress(ctx) } });
    if (a.status === 429 && edgeError(a).code === 'too_many_offers') {
      throw new ApiError(429, 'too_many_whep_offers', 'Too many WHEP offers from this address; retry after Retry-After seconds', undefined, { 'Retry-After': a.headers.get('retry-after') ?? '1' });
    }
    if (a.status === 503 && edgeError(a).code === 'rendition_pending') {
      throw new ApiError(503, 'webrtc_rendition_pending', "This broadcast's WebRTC rendition is starting; retry in a second", undefined, { 'Retry-After': '1' });
    }
    if (a.status !== 201) throw refusal(a, WHEP_CODES);
    const session = created(ctx, a, `${config.cdnUrl}/live/${ctx.params.subject}/whep`);
    // Counted here (docs/analytics.md) once it connects: a WHEP player may send no beacon. The address is hashed, never stored.
    // `?preview`: the dashboard studio's own preview is not a view (a player can only count itself out, never in).
    if (ctx.query.preview !== undefined) return;
    await deps.hot.whep.start(b.liveStreamId, b.workspaceId, session, { address: clientAddress(ctx), userAgent: ctx.get('user-agent') }).catch((err) => {
      deps.log.warn({ err }, 'WHEP view not recorded');
    });
  });

  // Ending a viewer's session needs no new judgement: the session id is the edge's secret.
  r.delete(`${base}:subject/whep/:session`, async (ctx) => {
    cors(ctx);
    if (!SESSION_RE.test(ctx.params.session)) throw notFound('WHEP session');
    let id = parseId('ls', ctx.params.subject);
    if (!id) {
      const grant = await verifyPlaybackToken(config.playback, ctx.params.subject);
      const row = grant ? await db('live_streams').where({ active_video_id: grant.videoUuid }).first('id') : undefined;
      id = row?.id ?? null;
    }
    if (!id) throw notFound('WHEP session');
    const a = await ask(deps, 'DELETE', `/whep/${id}/${ctx.params.session}`);
    if (a.status >= 300) throw refusal(a, WHEP_CODES);
    deps.hot.whep.end(id, ctx.params.session);
    ctx.status = 200;
    ctx.body = '';
  });
}
