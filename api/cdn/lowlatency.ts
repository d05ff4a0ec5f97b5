// SPEC §22 LL-HLS: a `latency_mode: low` broadcast's rungs are also packaged by the live edge's
// LL-HLS muxer (gohlslib: parts, preload hints, blocking reload), fed by the live session's ffmpeg.
// `{cdn_url}/live/<ls_id|token>/ll/<rung>/<file>` proxies `{edge}/hls/<ls_id>/<rung>/<file>` after
// the same visibility, token and restriction checks as every other live file; only the blocking
// reload query (`_HLS_msn`, `_HLS_part`, `_HLS_skip`) is passed on. The edge's playlists name their
// files relatively, so nothing in them is rewritten. Once the edge has the stream's muxers, the
// master is the edge's own multivariant playlist over the rungs with `ll/` before its URIs; players
// that do not speak LL-HLS play the same playlists' full segments. An `aes-128` broadcast is not offered LL-HLS (docs/live.md).
import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import { edgeRequest, edgeStream, EdgeUnreachable } from '../../lib/live/edge';
import { restrictedCacheControl } from '../../lib/protection/enforce';
import type { Deps } from '../deps';
import { ApiError, badRequest, notFound, unavailable } from '../errors';
import type { Broadcast } from './broadcast';

const RUNG_RE = /^(?:[1-9][0-9]{1,4}p|source)$/;
const FILE_RE = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}$/;
const BLOCKING = { _HLS_msn: /^[0-9]{1,12}$/, _HLS_part: /^[0-9]{1,6}$/, _HLS_skip: /^(?:YES|v2)$/ } as const;

/**
 * The LL-HLS multivariant playlist of a broadcast, or null for the plain ladder's: low mode, not
 * encrypted, no token capped by `max_resolution` (the plain master filters rungs for those), and
 * the edge packages it. It is the edge's (`GET /hls/{ls}/index.m3u8`, merged over the rungs, URIs
 * `<rung>/<file>`), with `ll/` put before each relative URI.
 */
export async function lowLatencyMaster(deps: Deps, b: Broadcast): Promise<string | null> {
  if (b.latencyMode !== 'low' || !deps.config.live.llhls || b.encrypted || b.grant?.maxResolution !== undefined) return null;
  // No edge, or no muxer yet (the first second of a broadcast): the plain HLS ladder, as before.
  const a = await edgeRequest(deps.config, 'GET', `/hls/${b.liveStreamId}/index.m3u8`, { timeoutMs: 6000 }).catch(() => null);
  if (a?.status !== 200 || !a.text.startsWith('#EXTM3U')) return null;
  return prefixUris(a.text, 'll/');
}

const RELATIVE = /^[A-Za-z0-9_-][A-Za-z0-9_./-]*$/;

/** Puts `prefix` before every URI of a playlist (lines and URI="…" attributes); null if one is not a plain relative path. */
export function prefixUris(text: string, prefix: string): string | null {
  let ok = true;
  const out = text.split('\n').map((line) => {
    if (line.startsWith('#')) {
      return line.replace(/URI="([^"]*)"/g, (_, uri: string) => {
        if (!RELATIVE.test(uri) || uri.includes('..')) ok = false;
        return `URI="${prefix}${uri}"`;
      });
    }
    const t = line.trim();
    if (!t) return line;
    if (!RELATIVE.test(t) || t.includes('..')) ok = false;
    return `${prefix}${t}`;
  });
  return ok ? out.join('\n') : null;
}

function blockingQuery(ctx: ParameterizedContext): string {
  const q = new URLSearchParams();
  for (const [k, re] of Object.entries(BLOCKING)) {
    const v = ctx.query[k];
    if (v === undefined) continue;
    if (typeof v !== 'string' || !re.test(v)) throw badRequest('invalid_query', `${k} is not a valid LL-HLS delivery directive`);
    q.set(k, v);
  }
  const text = q.toString();
  return text ? `?${text}` : '';
}

export function lowLatencyCdnRoutes(r: Router, deps: Deps, base: string, o: { resolve: (ctx: ParameterizedContext, subject: string) => Promise<Broadcast>; assertRung: (b: Broadcast, rung: string) => Promise<void> }): void {
  r.get(`${base}:subject/ll/:rung/:file`, async (ctx) => {
    const { rung, file } = ctx.params;
    if (!RUNG_RE.test(rung) || !FILE_RE.test(file)) throw notFound('File');
    const b = await o.resolve(ctx, ctx.params.subject);
    if (b.latencyMode !== 'low' || !deps.config.live.llhls || b.encrypted) throw notFound('File');
    await o.assertRung(b, rung);
    const query = blockingQuery(ctx);
    // A blocking playlist reload waits for its part (a few target durations at most); a viewer who
    // leaves ends the edge request too.
    const gone = new AbortController();
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) gone.abort();
    });
    let res;
    try {
      res = await edgeStream(deps.config, `/hls/${b.liveStreamId}/${rung}/${file}${query}`, { timeoutMs: 20_000, signal: gone.signal });
    } catch (err) {
      if (err instanceof EdgeUnreachable) throw unavailable('The live edge is unavailable; try again shortly');
      throw err;
    }
    if (res.status !== 200) {
      res.body?.destroy();
      if (res.status === 404) throw notFound('File');
      if (res.status === 400) throw badRequest('invalid_query', 'The LL-HLS delivery directives are out of range');
      if (res.status === 503) throw unavailable('The live edge is unavailable; try again shortly');
      throw new ApiError(502, 'live_edge_error', `The live edge answered ${res.status}`);
    }
    const playlist = file.endsWith('.m3u8');
    ctx.set('Cache-Control', playlist ? 'no-cache' : restrictedCacheControl(b, 'public, max-age=60'));
    ctx.type = res.headers.get('content-type') ?? (playlist ? 'application/vnd.apple.mpegurl' : 'video/mp4');
    const len = res.headers.get('content-length');
    if (len) ctx.length = Number(len);
    ctx.body = res.body ?? '';
  });
}
