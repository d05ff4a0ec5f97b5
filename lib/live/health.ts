// Stream health (SPEC §22): what an encoder sends, measured while it broadcasts. For RTMP it is
// measured here, on the live session's ffmpeg: an extra `-c copy -f framecrc pipe:1` output lists
// every packet of the feed as it arrives (stream, dts, pts, duration, size, flags), which gives the
// ingest bitrate over the last 5 s, the keyframe interval and the frame rate at no decode cost.
// SRT and WHIP publishers are measured by the live edge (GET /streams/{ls}); both end in the same
// shape, with the same warnings.
import { LIVE_BOUNDS } from './ladder';

export type IngestProtocol = 'rtmp' | 'srt' | 'whip';

export interface StreamHealth {
  protocol: IngestProtocol;
  video: { codec: string; width: number; height: number; fps: number | null } | null;
  audio: { codec: string } | null;
  bitrate_kbps: number | null;
  keyframe_interval_s: number | null;
  warnings: Array<{ code: HealthWarning; message: string }>;
}

export type HealthWarning = 'keyframe_interval_high' | 'bitrate_over_plan';

/** Past this, players joining wait long and segments stretch (SPEC §22). */
export const MAX_KEYFRAME_INTERVAL_S = 4;

/** The warnings of a measure: keyframes further apart than 4 s, a bitrate over the ingest bound. */
export function healthWarnings(h: Pick<StreamHealth, 'bitrate_kbps' | 'keyframe_interval_s'>, maxKbps = LIVE_BOUNDS.maxBitrate / 1000): StreamHealth['warnings'] {
  const out: StreamHealth['warnings'] = [];
  if (h.keyframe_interval_s !== null && h.keyframe_interval_s > MAX_KEYFRAME_INTERVAL_S) {
    out.push({ code: 'keyframe_interval_high', message: `keyframes are ${h.keyframe_interval_s.toFixed(1)} s apart (at most ${MAX_KEYFRAME_INTERVAL_S} s; 1–2 s is best)` });
  }
  if (h.bitrate_kbps !== null && h.bitrate_kbps > maxKbps) {
    out.push({ code: 'bitrate_over_plan', message: `the encoder sends ${Math.round(h.bitrate_kbps)} kb/s (the plan takes at most ${Math.round(maxKbps)} kb/s)` });
  }
  return out;
}

/**
 * Reads ffmpeg's framecrc lines as they come. Stream 0 is the video (the session maps it first),
 * stream 1 the audio. `now` is the wall clock (tests pass their own).
 */
export class FeedMeter {
  private partial = '';
  private bytes: Array<[number, number]> = [];
  private keyPts: number[] = [];
  private videoPts: number[] = [];
  private tb: Record<string, number> = {};
  codecs: Record<string, string> = {};
  width = 0;
  height = 0;

  constructor(private readonly now: () => number = Date.now) {}

  push(chunk: string): void {
    const text = this.partial + chunk;
    const lines = text.split('\n');
    this.partial = (lines.pop() ?? '').slice(-4096);
    for (const line of lines) this.line(line.trim());
  }

  private line(line: string): void {
    if (line.startsWith('#')) {
      const m = /^#(tb|codec_id|dimensions) (\d+): (.+)$/.exec(line);
      if (!m) return;
      if (m[1] === 'tb') {
        const [a, b] = m[3].split('/').map(Number);
        if (a > 0 && b > 0) this.tb[m[2]] = a / b;
      } else if (m[1] === 'codec_id') this.codecs[m[2]] = m[3].trim();
      else if (m[2] === '0') {
        const d = /^(\d+)x(\d+)$/.exec(m[3].trim());
        if (d) [this.width, this.height] = [Number(d[1]), Number(d[2])];
      }
      return;
    }
    const f = line.split(',').map((x) => x.trim());
    if (f.length < 6) return;
    const [stream, , ptsText, , sizeText] = f;
    const size = Number(sizeText);
    const pts = Number(ptsText) * (this.tb[stream] ?? 0.001);
    if (!Number.isFinite(size) || !Number.isFinite(pts)) return;
    const t = this.now();
    this.bytes.push([t, size]);
    if (stream === '0') {
      // framecrc marks non-key packets with F=0x0 (no flags column: a keyframe).
      const key = !f.slice(6).some((x) => x.startsWith('F=') && (Number.parseInt(x.slice(2), 16) & 1) === 0);
      this.videoPts.push(pts);
      if (this.videoPts.length > 600) this.videoPts.shift();
      if (key && this.keyPts[this.keyPts.length - 1] !== pts) {
        this.keyPts.push(pts);
        if (this.keyPts.length > 8) this.keyPts.shift();
      }
    }
    while (this.bytes.length && this.bytes[0][0] < t - 5000) this.bytes.shift();
  }

  /** The measure so far (bitrate over the last 5 s; null until there is something to say). */
  health(protocol: IngestProtocol): StreamHealth {
    const t = this.now();
    const recent = this.bytes.filter(([at]) => at >= t - 5000);
    const span = recent.length ? Math.max(1, Math.min(5, (t - recent[0][0]) / 1000)) : 0;
    const bitrate = span ? (recent.reduce((s, [, n]) => s + n, 0) * 8) / 1000 / span : null;
    const k = this.keyPts;
    // Since the last keyframe counts too: a feed that stopped sending them is caught.
    const lastVideo = this.videoPts[this.videoPts.length - 1];
    const gaps = k.slice(1).map((p, i) => p - k[i]);
    if (k.length && lastVideo !== undefined && lastVideo - k[k.length - 1] > (gaps[gaps.length - 1] ?? 0)) gaps.push(lastVideo - k[k.length - 1]);
    const keyframe = gaps.length ? Math.round(gaps[gaps.length - 1] * 100) / 100 : null;
    const v = this.videoPts;
    const fps = v.length > 10 ? Math.round(((v.length - 1) / Math.max(1e-3, Math.max(...v) - Math.min(...v))) * 10) / 10 : null;
    const measured = { bitrate_kbps: bitrate === null ? null : Math.round(bitrate), keyframe_interval_s: keyframe };
    return {
      protocol,
      video: this.codecs['0'] ? { codec: this.codecs['0'], width: this.width, height: this.height, fps } : null,
      audio: this.codecs['1'] ? { codec: this.codecs['1'] } : null,
      ...measured,
      warnings: healthWarnings(measured),
    };
  }
}
