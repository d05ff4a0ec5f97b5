import { z } from 'zod';
import { mountPath } from '../../lib/playback/urls';
import { IMAGE_LIMITS, animatedQuery, thumbnailQuery } from './outputs/images';

const RENDER_LIMITS =
  'A new render (cache miss) is bounded (docs/outputs.md "Render limits"): 429 `render_rate_limited` past the per-address or per-video budget of anonymous requests; ' +
  '503 `render_queue_full`, `render_timeout`, `render_failed` (a failed render is remembered for a while) or `render_unavailable`, all with Retry-After. ' +
  'A playback token or the workspace\'s API key (Authorization) takes the keyed lane, which anonymous requests cannot fill.';
import { type DocContext, operation } from '../openapi/operation';

const subject = z.string().meta({
  description: 'A `vid_` id (public and unlisted videos) or a playback token from GET /playback/{id} (any visibility). A playback restriction (SPEC §20) refuses other sites with 403 `playback_restricted`.',
});
const file = (type: string, description: string) => ({ description, content: { [type]: { schema: z.string().meta({ format: 'binary' }) } } });

/** `{cdn_url}/v/<id|token>/…` (SPEC §7): key-less, Range, CORS. Documented on the CDN's own server URL. */
export function cdnDocs(d: DocContext): void {
  const servers = [d.config.cdnUrl];
  const koaRoute = `${mountPath(d.config.cdnUrl)}/v/*rest`;
  const common = { tag: 'CDN', auth: false, servers, koaRoute, errors: [403, 404, 416] } as const;
  const playlist = file('application/vnd.apple.mpegurl', 'HLS playlist');
  // Every /v/ file answers If-None-Match with 304 (api/cdn/stream.ts); /live/ files carry no ETag.
  const notModified = { description: 'Not modified (If-None-Match)' };
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/master.m3u8', operationId: 'cdnMaster', summary: 'Master playlist',
    params: z.object({ subject }), responses: { 200: playlist, 304: notModified },
  });
  operation(d, {
    ...common, method: 'options', path: '/v/{subject}/master.m3u8', operationId: 'cdnPreflight', errors: [],
    summary: 'CORS preflight (the same answer for every CDN path)', params: z.object({ subject }),
    responses: { 204: { description: 'Access-Control-Allow-Methods: GET, HEAD, POST, DELETE, OPTIONS; Location exposed' } },
  });
  const media = (types: string[], description: string) => ({ description, content: Object.fromEntries(types.map((t) => [t, { schema: z.string().meta({ format: 'binary' }) }])) });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/thumbnail.{format}', operationId: 'cdnThumbnail', summary: 'Poster frame, or a frame rendered on demand',
    description: 'Without a query: the poster frame. With `time`, `width`, `height`, `fit_mode`: rendered once and cached (`X-Render-Cache`); `time` is rounded to 0.1 s. Bad query → 400 `invalid_parameters` / `time_out_of_range`. ' + RENDER_LIMITS,
    params: z.object({ subject, format: z.enum(['jpg', 'png', 'webp']) }), query: thumbnailQuery,
    responses: { 200: media(['image/jpeg', 'image/png', 'image/webp'], 'The image'), 304: notModified }, errors: [400, 403, 404, 416, 429, 503],
  });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/animated.{format}', operationId: 'cdnAnimated', summary: 'Animated preview rendered on demand',
    description: `\`start\`/\`end\` at most ${IMAGE_LIMITS.maxSpan} s apart (rounded to 0.1 s), \`width\` ≤ ${IMAGE_LIMITS.maxAnimatedWidth} (rounded to a multiple of 8), \`fps\` ≤ ${IMAGE_LIMITS.maxFps}, at least one frame. Bad query → 400. ${RENDER_LIMITS}`,
    params: z.object({ subject, format: z.enum(['gif', 'webp']) }), query: animatedQuery,
    responses: { 200: media(['image/gif', 'image/webp'], 'The animation'), 304: notModified }, errors: [400, 403, 404, 416, 429, 503],
  });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/storyboard.{format}', operationId: 'cdnStoryboard', summary: 'Storyboard: WebVTT of `#xywh` tiles, and the tile sheet',
    params: z.object({ subject, format: z.enum(['vtt', 'jpg']) }),
    responses: { 200: media(['text/vtt', 'image/jpeg'], 'The WebVTT index or the JPEG sheet'), 206: media(['text/vtt', 'image/jpeg'], 'Partial content'), 304: notModified },
  });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/download/{name}', operationId: 'cdnDownload', summary: 'Static rendition (mp4_support), with Content-Disposition',
    params: z.object({ subject, name: z.enum(['capped_1080p.mp4', 'audio.m4a']) }),
    responses: { 200: media(['video/mp4', 'audio/mp4'], 'MP4 or M4A'), 206: media(['video/mp4', 'audio/mp4'], 'Partial content'), 304: notModified },
  });
  const lang = z.string().meta({ description: 'BCP-47 tag', example: 'en' });
  const vtt = file('text/vtt', 'WebVTT captions');
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/captions/{lang}.vtt', operationId: 'cdnCaptions', summary: 'A caption track as WebVTT',
    params: z.object({ subject, lang }), responses: { 200: vtt, 206: vtt, 304: notModified },
  });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/subs/{lang}/index.m3u8', operationId: 'cdnSubtitlePlaylist', summary: 'A caption track\'s HLS subtitle playlist',
    params: z.object({ subject, lang }), responses: { 200: playlist, 304: notModified },
  });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/subs/{lang}/captions.vtt', operationId: 'cdnSubtitleFile', summary: 'The WebVTT the subtitle playlist names',
    params: z.object({ subject, lang }), responses: { 200: vtt, 206: vtt, 304: notModified },
  });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/key', operationId: 'cdnKey', summary: "An encrypted video's AES-128 key (16 bytes), to a valid token only",
    description: 'Named by `#EXT-X-KEY` in the rendition playlists of a video with `encryption: "aes-128"`. A bare id → 403; an expired token → 403; an unencrypted video → 404.',
    params: z.object({ subject }), responses: { 200: file('application/octet-stream', 'The key') }, errors: [403, 404],
  });
  const rung = z.string().meta({ example: '720p' });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/{rung}/index.m3u8', operationId: 'cdnRendition', summary: 'A rendition\'s playlist',
    params: z.object({ subject, rung }), responses: { 200: playlist, 304: notModified },
  });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/manifest.mpd', operationId: 'cdnDashManifest', summary: 'DASH manifest over the CMAF (HEVC/AV1) renditions (SPEC §21)',
    params: z.object({ subject }), responses: { 200: file('application/dash+xml', 'DASH MPD'), 304: notModified },
  });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/{rung}/init.mp4', operationId: 'cdnCmafInit', summary: 'A CMAF rendition\'s initialization segment',
    params: z.object({ subject, rung: z.string().meta({ example: '720p-av1' }) }), responses: { 200: file('video/mp4', 'fMP4 init segment'), 206: file('video/mp4', 'Partial content'), 304: notModified },
  });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/{rung}/{segment}.m4s', operationId: 'cdnCmafSegment', summary: 'A CMAF media segment (Range → 206)',
    params: z.object({ subject, rung: z.string().meta({ example: '720p-av1' }), segment: z.string().meta({ example: 'seg_00001' }) }),
    responses: { 200: file('video/mp4', 'fMP4 media segment'), 206: file('video/mp4', 'Partial content'), 304: notModified },
  });
  operation(d, {
    ...common, method: 'get', path: '/v/{subject}/{rung}/{segment}.ts', operationId: 'cdnSegment', summary: 'A segment (Range → 206)',
    params: z.object({ subject, rung, segment: z.string().meta({ example: 'seg_00001' }) }),
    responses: { 200: file('video/mp2t', 'MPEG-TS segment'), 206: file('video/mp2t', 'Partial content'), 304: notModified },
  });
  // SPEC §17 live playback (api/cdn/live.ts)
  const live = z.string().meta({
    description: 'A `ls_` id (public and unlisted live streams) or a playback token of the broadcast\'s recording. The stream\'s playback restriction (SPEC §20) refuses other sites with 403 `playback_restricted`.',
  });
  const liveCommon = { tag: 'CDN', auth: false, servers, errors: [403, 404] } as const;
  const base = mountPath(d.config.cdnUrl);
  operation(d, {
    ...liveCommon, method: 'get', path: '/live/{subject}/master.m3u8', koaRoute: `${base}/live/:subject/master.m3u8`, operationId: 'cdnLiveMaster',
    summary: 'Live multivariant playlist (404 while no broadcast is on)', params: z.object({ subject: live }), responses: { 200: playlist },
  });
  operation(d, {
    ...liveCommon, method: 'get', path: '/live/{subject}/{rung}/index.m3u8', koaRoute: `${base}/live/:subject/:rung/index.m3u8`, operationId: 'cdnLiveRendition',
    summary: 'A rung\'s sliding window, with EXT-X-PROGRAM-DATE-TIME', params: z.object({ subject: live, rung }), responses: { 200: playlist },
  });
  operation(d, {
    ...liveCommon, method: 'get', path: '/live/{subject}/{rung}/{file}', koaRoute: `${base}/live/:subject/:rung/:file`, operationId: 'cdnLiveSegment',
    summary: 'A live segment (`seg_NNNNNN.ts`)', params: z.object({ subject: live, rung, file: z.string().meta({ example: 'seg_000001.ts' }) }),
    responses: { 200: file('video/mp2t', 'MPEG-TS segment') },
  });
  operation(d, {
    ...liveCommon, method: 'get', path: '/live/{subject}/key', koaRoute: `${base}/live/:subject/key`, operationId: 'cdnLiveKey',
    summary: "An `aes-128` broadcast's AES-128 key (its recording's, 16 bytes), to a playback token of the recording only",
    params: z.object({ subject: live }), responses: { 200: file('application/octet-stream', 'The key') },
  });
  // SPEC §22 LL-HLS (api/cdn/lowlatency.ts) and WHIP/WHEP (api/cdn/realtime.ts), proxied to the live edge
  operation(d, {
    ...liveCommon, method: 'get', path: '/live/{subject}/ll/{rung}/{file}', koaRoute: `${base}/live/:subject/ll/:rung/:file`, operationId: 'cdnLiveLowLatency',
    summary: "A `latency_mode: low` broadcast's LL-HLS files (the master lists `ll/<rung>/index.m3u8`): media playlists with parts, preload hints and blocking reload (`_HLS_msn`, `_HLS_part`), init, segments and parts",
    params: z.object({ subject: live, rung, file: z.string().meta({ example: 'index.m3u8' }) }),
    query: z.object({ _HLS_msn: z.string().optional(), _HLS_part: z.string().optional(), _HLS_skip: z.string().optional() }),
    responses: { 200: file('application/octet-stream', 'Playlist (application/vnd.apple.mpegurl) or fMP4 media (video/mp4)') }, errors: [400, 403, 404, 503],
  });
  const sdp = (description: string) => ({ description, content: { 'application/sdp': { schema: z.string() } }, headers: z.object({ Location: z.string().meta({ description: 'The session resource (DELETE it to end)' }) }) });
  const bearer = z.object({ Authorization: z.string().meta({ description: '`Bearer <stream_key>` (the live stream key, not an API key)' }) });
  const session = z.string().meta({ description: "The edge's session id, from Location" });
  operation(d, {
    ...liveCommon, method: 'post', path: '/live/whip', koaRoute: `${base}/live/whip`, operationId: 'whipPublish',
    summary: 'WHIP (RFC 9725): publish an SDP offer (H.264 + Opus, ≤ 64 KB) with the stream key as the Bearer token; `?resume=1` marks an automatic retry, refused with 409 `broadcast_ended` once the broadcast was completed or disabled',
    headers: bearer, query: z.object({ resume: z.string().optional() }), rawBody: { 'application/sdp': z.string() }, responses: { 201: sdp('The SDP answer') },
    errors: [400, 401, 403, 409, 413, 415, 429, 502, 503],
  });
  operation(d, {
    ...liveCommon, method: 'delete', path: '/live/whip/{session}', koaRoute: `${base}/live/whip/:session`, operationId: 'whipEnd',
    summary: 'End a WHIP session (the broadcast goes `disconnected`, then `idle` after the reconnect window)', headers: bearer,
    params: z.object({ session }), responses: { 200: { description: 'Ended' } }, errors: [401, 404, 502, 503],
  });
  operation(d, {
    ...liveCommon, method: 'patch', path: '/live/whip/{session}', koaRoute: `${base}/live/whip/:session`, operationId: 'whipTrickle',
    summary: 'Trickle ICE is not taken: always 405 `trickle_ice_not_supported` (send every candidate in the offer; no `Accept-Patch` is advertised)', params: z.object({ session }),
    responses: {}, errors: [405],
  });
  operation(d, {
    ...liveCommon, method: 'post', path: '/live/{subject}/whep', koaRoute: `${base}/live/:subject/whep`, operationId: 'whepPlay',
    summary: 'WHEP: play a broadcast (POST a recvonly SDP offer, ≤ 64 KB); visibility, tokens and restrictions as for HLS; offers per client address are rate limited (429 `too_many_whep_offers` + Retry-After); a session is a view from its ICE connection, not its 201 (`?preview=1`: never: the dashboard studio preview)',
    params: z.object({ subject: live }), query: z.object({ preview: z.string().optional() }), rawBody: { 'application/sdp': z.string() }, responses: { 201: sdp('The SDP answer') },
    errors: [400, 403, 404, 413, 415, 429, 502, 503],
  });
  operation(d, {
    ...liveCommon, method: 'delete', path: '/live/{subject}/whep/{session}', koaRoute: `${base}/live/:subject/whep/:session`, operationId: 'whepEnd',
    summary: 'End a WHEP session', params: z.object({ subject: live, session }), responses: { 200: { description: 'Ended' } }, errors: [404, 502, 503],
  });
  operation(d, {
    ...liveCommon, method: 'options', path: '/live/{subject}/master.m3u8', koaRoute: `${base}/live/*rest`, operationId: 'cdnLivePreflight', errors: [],
    summary: 'CORS preflight (every live path)', params: z.object({ subject: live }), responses: { 204: { description: 'Access-Control-Allow-Methods: GET, HEAD, POST, DELETE, OPTIONS; Location exposed' } },
  });
}
