// The live room (issue 23, docs/live.md): ingest (media server), the live task queue, latency.
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { DEV_SECRET, type EnvOf } from './env';

export const liveEnv = {
  TEMPORAL_LIVE_QUEUE: z.string().default('vidhost-live'),
  LIVE_CONCURRENCY: z.coerce.number().int().min(1).default(4),
  LIVE_HEARTBEAT_TIMEOUT_MS: z.coerce.number().int().min(1000).default(4000),
  LIVE_INGEST_HOST: z.string().default('127.0.0.1'),
  LIVE_RTMP_PORT: z.coerce.number().int().min(0).max(65535).default(1935),
  LIVE_SRT_PORT: z.coerce.number().int().min(0).max(65535).default(8890),
  /** Loopback port where the live hooks answer the edge: the stream-key check, /connected, /disconnected. */
  LIVE_SRT_CHECK_PORT: z.coerce.number().int().min(0).max(65535).default(8891),
  /** Where encoders are told to send (ingest.rtmp_url/srt_url); default from PUBLIC_BASE_URL's host. */
  LIVE_PUBLIC_INGEST_HOST: z.string().optional(),
  LIVE_SEGMENT_SECONDS: z.coerce.number().min(1).max(10).default(2),
  LIVE_LOW_LATENCY_SEGMENT_SECONDS: z.coerce.number().min(0.2).max(2).default(1),
  LIVE_WINDOW_SECONDS: z.coerce.number().min(30).default(36),
  LIVE_X264_PRESET: z.string().default('veryfast'),
  // The live edge (ingest/, `vidhost-edge`: SRT, WHIP/WHEP, LL-HLS; docs/live.md, ingest/EDGE-CONTRACT.md).
  /** The edge's internal HTTP API port (bound to LIVE_EDGE_HTTP_HOST). */
  LIVE_EDGE_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(8889),
  LIVE_EDGE_HTTP_HOST: z.string().default('127.0.0.1'),
  /**
   * The edge API's credential (`Authorization: Bearer …` on every call but /healthz). Unset: derived
   * from UPLOAD_SIGNING_SECRET (ingest/config EdgeSecret computes the same), so both sides agree.
   */
  LIVE_EDGE_SECRET: z.string().min(16).optional(),
  /** How the API and live workers reach the edge's internal HTTP API (k8s: its Service). */
  LIVE_EDGE_INTERNAL_URL: z.string().url().default('http://127.0.0.1:8889'),
  /** ONE UDP port for every WebRTC session (pion UDPMux). */
  LIVE_WEBRTC_UDP_PORT: z.coerce.number().int().min(0).max(65535).default(8189),
  /** Comma-separated public IPs/hosts the edge announces as host candidates (NAT 1:1); empty: local addresses. */
  LIVE_WEBRTC_ANNOUNCE: z.string().default(''),
  LIVE_WHEP_MAX_VIEWERS: z.coerce.number().int().min(1).default(200),
  /** `low` broadcasts are also packaged as LL-HLS by the edge (off: plain HLS with short segments only). */
  LIVE_LLHLS: z.enum(['on', 'off']).default('on'),
  /** A broadcast WHEP cannot be given as is (B-frames, AAC, a watermark) gets a rendition made for WebRTC (lib/live/webrtc.ts; off: such a WHEP answers 503). */
  LIVE_WEBRTC_RENDITION: z.enum(['on', 'off']).default('on'),
  /** Keyframe interval (s) of the live ladder in `low` mode (LL-HLS segments are cut on keyframes). */
  LIVE_LOW_LATENCY_GOP_SECONDS: z.coerce.number().min(0.2).max(4).default(1),
};

export interface LiveConfig {
  queue: string;
  concurrency: number;
  heartbeatTimeoutMs: number;
  ingestHost: string;
  rtmpPort: number;
  srtPort: number;
  srtCheckPort: number;
  publicIngestHost: string;
  segmentSeconds: number;
  lowLatencySegmentSeconds: number;
  windowSeconds: number;
  x264Preset: string;
  edgeHttpPort: number;
  edgeHttpHost: string;
  /** No trailing slash. */
  edgeInternalUrl: string;
  /** The edge API's bearer credential (LIVE_EDGE_SECRET or derived). */
  edgeSecret: string;
  webrtcUdpPort: number;
  webrtcAnnounce: string[];
  whepMaxViewers: number;
  llhls: boolean;
  /** LIVE_WEBRTC_RENDITION: the session's ffmpeg also encodes the WebRTC rendition when needed. */
  webrtcRendition: boolean;
  lowLatencyGopSeconds: number;
}

/** The edge's credential: explicit, else hex(HMAC-SHA256(upload secret, "vidhost-live-edge")) (ingest/config EdgeSecret). */
export function edgeSecret(explicit: string | undefined, uploadSecret: string | undefined): string {
  if (explicit?.trim()) return explicit.trim();
  return createHmac('sha256', uploadSecret?.trim() || DEV_SECRET).update('vidhost-live-edge').digest('hex');
}

/** `publicBaseUrl`: the default ingest host's source; `uploadSecret`: the media secret's default. */
export function liveConfig(e: EnvOf<typeof liveEnv>, publicBaseUrl: string, uploadSecret: string | undefined): LiveConfig {
  return {
    queue: e.TEMPORAL_LIVE_QUEUE,
    concurrency: e.LIVE_CONCURRENCY,
    heartbeatTimeoutMs: e.LIVE_HEARTBEAT_TIMEOUT_MS,
    ingestHost: e.LIVE_INGEST_HOST,
    rtmpPort: e.LIVE_RTMP_PORT,
    srtPort: e.LIVE_SRT_PORT,
    srtCheckPort: e.LIVE_SRT_CHECK_PORT,
    publicIngestHost: e.LIVE_PUBLIC_INGEST_HOST ?? new URL(publicBaseUrl).hostname,
    segmentSeconds: e.LIVE_SEGMENT_SECONDS,
    lowLatencySegmentSeconds: e.LIVE_LOW_LATENCY_SEGMENT_SECONDS,
    windowSeconds: e.LIVE_WINDOW_SECONDS,
    x264Preset: e.LIVE_X264_PRESET,
    edgeHttpPort: e.LIVE_EDGE_HTTP_PORT,
    edgeHttpHost: e.LIVE_EDGE_HTTP_HOST,
    edgeInternalUrl: e.LIVE_EDGE_INTERNAL_URL.replace(/\/+$/, ''),
    edgeSecret: edgeSecret(e.LIVE_EDGE_SECRET, uploadSecret),
    webrtcUdpPort: e.LIVE_WEBRTC_UDP_PORT,
    webrtcAnnounce: e.LIVE_WEBRTC_ANNOUNCE.split(',').map((x) => x.trim()).filter(Boolean),
    whepMaxViewers: e.LIVE_WHEP_MAX_VIEWERS,
    llhls: e.LIVE_LLHLS === 'on',
    webrtcRendition: e.LIVE_WEBRTC_RENDITION === 'on',
    lowLatencyGopSeconds: e.LIVE_LOW_LATENCY_GOP_SECONDS,
  };
}
