// The live edge's internal HTTP API (ingest/, `vidhost-edge`; ingest/EDGE-CONTRACT.md): WHIP, WHEP, LL-HLS
// and stream stats. Every call carries the service's credential (`Authorization: Bearer
// LIVE_EDGE_SECRET`, edgeHeaders); only the API (after its key, token, visibility and restriction
// checks) and the live workers call it, at LIVE_EDGE_INTERNAL_URL.
import { Readable } from 'node:stream';
import type { Config } from '../config';

export interface EdgeAnswer {
  status: number;
  headers: Headers;
  /** The whole body (bounded), for SDP and JSON answers. */
  text: string;
}

/** The edge did not answer (down, restarting, unreachable). */
export class EdgeUnreachable extends Error {}

/** The answers the API reads are SDP or small JSON: a bigger body is the edge misbehaving. */
const MAX_ANSWER_BYTES = 256 * 1024;

async function boundedText(res: Response, max: number): Promise<string> {
  if (!res.body) return '';
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of res.body as unknown as AsyncIterable<Uint8Array>) {
    n += c.byteLength;
    if (n > max) throw new EdgeUnreachable(`the edge answered more than ${max} bytes`);
    chunks.push(Buffer.from(c));
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** An edge request's options; `headers` are added to the credential (e.g. the viewer's address on a WHEP offer). */
interface CallOptions {
  body?: string;
  contentType?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

async function call(config: Config, method: string, path: string, o: CallOptions = {}): Promise<Response> {
  const signals = [AbortSignal.timeout(o.timeoutMs ?? 10_000), ...(o.signal ? [o.signal] : [])];
  try {
    return await fetch(`${config.live.edgeInternalUrl}${path}`, {
      method,
      body: o.body,
      headers: { ...o.headers, ...edgeHeaders(config), ...(o.contentType ? { 'content-type': o.contentType } : {}) },
      signal: AbortSignal.any(signals),
      redirect: 'manual',
    });
  } catch (err) {
    throw new EdgeUnreachable(`the live edge did not answer ${method} ${path.split('/').slice(0, 2).join('/')}: ${(err as Error).message}`);
  }
}

/** The edge's credential, as request headers. */
export const edgeHeaders = (config: Config): Record<string, string> => ({ authorization: `Bearer ${config.live.edgeSecret}` });

/** The same for ffmpeg's `headers` option (CRLF-terminated lines). */
export const edgeHeaderLines = (config: Config): string => `Authorization: Bearer ${config.live.edgeSecret}\r\n`;

/** Where a live worker's ffmpeg PUTs a rung's MPEG-TS for the edge's LL-HLS packager. */
export const edgeIngestUrl = (config: Config, liveStreamId: string, rung: string) => `${config.live.edgeInternalUrl}/hls/${liveStreamId}/${rung}/ingest`;

/** Where a live worker's ffmpeg PUTs the WebRTC rendition (lib/live/webrtc.ts) for the edge's WHEP. */
export const edgeWebrtcIngestUrl = (config: Config, liveStreamId: string) => `${config.live.edgeInternalUrl}/webrtc/${liveStreamId}/ingest`;

/** One request whose whole (bounded) answer is read. */
export async function edgeRequest(config: Config, method: string, path: string, o: Omit<CallOptions, 'signal'> = {}): Promise<EdgeAnswer> {
  const res = await call(config, method, path, o);
  return { status: res.status, headers: res.headers, text: await boundedText(res, MAX_ANSWER_BYTES) };
}

/** One request whose body is streamed on (LL-HLS playlists, parts and segments). */
export async function edgeStream(config: Config, path: string, o: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<{ status: number; headers: Headers; body: Readable | null }> {
  const res = await call(config, 'GET', path, o);
  return { status: res.status, headers: res.headers, body: res.body ? Readable.fromWeb(res.body as import('node:stream/web').ReadableStream) : null };
}

/** The `{"error":{"code","message"}}` of an edge refusal, when it sent one. */
export function edgeError(a: EdgeAnswer): { code?: string; message?: string } {
  try {
    const j = JSON.parse(a.text) as { error?: { code?: unknown; message?: unknown } };
    return { code: typeof j.error?.code === 'string' ? j.error.code : undefined, message: typeof j.error?.message === 'string' ? j.error.message.slice(0, 300) : undefined };
  } catch {
    return {};
  }
}

/** The header that names the viewer's address on a WHEP offer: the edge's per-address offer bucket (ingest/webrtc/offerlimit.go). */
export const EDGE_CLIENT_HEADER = 'x-vidhost-client';

/** What the edge itself sees of a stream (GET /streams/{ls}); null when it has no such stream. */
export interface EdgeStreamStats {
  protocol: 'rtmp' | 'srt' | 'whip';
  video: { codec: string; width: number; height: number; fps: number } | null;
  audio: { codec: string } | null;
  bitrate_kbps: number;
  keyframe_interval_s: number | null;
  /** WHEP sessions whose ICE completed (a session is a viewer from then, not from its 201). */
  whep_viewers: number;
  /** Their session ids (an older edge sends none). */
  whep_sessions?: string[];
  llhls: boolean;
  /** WHEP is served from the worker's WebRTC rendition (absent from older edges). */
  webrtc_rendition?: boolean;
}

export async function edgeStreamStats(config: Config, liveStreamId: string, timeoutMs = 1500): Promise<EdgeStreamStats | null> {
  const a = await edgeRequest(config, 'GET', `/streams/${encodeURIComponent(liveStreamId)}`, { timeoutMs });
  if (a.status !== 200) return null;
  try {
    return JSON.parse(a.text) as EdgeStreamStats;
  } catch {
    return null;
  }
}
