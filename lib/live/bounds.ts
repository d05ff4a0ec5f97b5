// SPEC §17's input bounds for the whole broadcast (issue 33 rows 3 and 7), checked by the media
// server on every FLV packet an encoder sends, before it reaches anyone who reads the feed:
// - video H.264 or HEVC and audio AAC or Opus, and neither codec changing mid-stream;
// - the picture size of every sequence header and of every SPS a keyframe carries in-band
//   (ffmpeg `-c copy` from a concatenated MPEG-TS switches resolution that way) ≤ 1080p;
// - ≤ 60 fps, counted on the packets' timestamps over 5 s of media;
// - ≤ 20 Mb/s of media, measured on the bytes that arrive over a 10 s wall-clock window (as the
//   SRT gateway does; RTMP's declared `format.bit_rate` is empty for live FLV). The window's
//   budget is checked as bytes arrive: a feed that has sent more than 20 Mb/s × 10 s within the
//   window averages over the bound whatever follows, and is dropped at once.
// SRT and WHIP feeds are republished to the media server as RTMP, so the same check covers them.
import { LIVE_BOUNDS } from './ladder';
import { h264SpsSize, hevcSpsSize, type PictureSize } from './sps';

/** The parts of a node-media-server AVPacket read here: 8 audio, 9 video, 18 script; `data` is the FLV tag body. */
export interface FlvPacket {
  codec_type: number;
  dts: number;
  data: Buffer;
}

type VideoCodec = 'h264' | 'hevc';

const FLV_VIDEO_IDS: Record<number, VideoCodec> = { 7: 'h264', 12: 'hevc' };
const VIDEO_FOURCC: Record<string, VideoCodec> = { avc1: 'h264', hvc1: 'hevc' };
const AUDIO_FOURCC: Record<string, string> = { mp4a: 'aac', Opus: 'opus' };
/** At most this many NAL units of a keyframe are looked at for an SPS (it comes first). */
const MAX_NALS = 32;

export interface BoundsOptions {
  maxBitrate?: number;
  bitrateWindowMs?: number;
  fpsWindowMs?: number;
  now?: () => number;
}

export class FeedBounds {
  private readonly maxBitrate: number;
  private readonly bitrateWindowMs: number;
  private readonly fpsWindowMs: number;
  private readonly now: () => number;
  private video: VideoCodec | null = null;
  private audio: string | null = null;
  private nalLength = 4;
  private windowStart = -1;
  private windowBytes = 0;
  private fpsStart = -1;
  private frames = 0;
  /** The last picture size seen (sequence header or in-band SPS). */
  size: PictureSize | null = null;

  constructor(o: BoundsOptions = {}) {
    this.maxBitrate = o.maxBitrate ?? LIVE_BOUNDS.maxBitrate;
    this.bitrateWindowMs = o.bitrateWindowMs ?? 10_000;
    this.fpsWindowMs = o.fpsWindowMs ?? 5_000;
    this.now = o.now ?? Date.now;
  }

  /** Why the feed is out of bounds as of this packet, or null. */
  check(p: FlvPacket): string | null {
    return this.bitrate(p.data.length) ?? (p.codec_type === 9 ? this.checkVideo(p) : p.codec_type === 8 ? this.checkAudio(p.data) : null);
  }

  private bitrate(bytes: number): string | null {
    const now = this.now();
    if (this.windowStart < 0 || now - this.windowStart >= this.bitrateWindowMs) {
      this.windowStart = now;
      this.windowBytes = 0;
    }
    this.windowBytes += bytes;
    if (this.windowBytes * 8 <= (this.maxBitrate * this.bitrateWindowMs) / 1000) return null;
    const seconds = Math.max(now - this.windowStart, 1000) / 1000;
    return `${Math.round((this.windowBytes * 8) / seconds / 1e6)} Mb/s is over ${this.maxBitrate / 1e6} Mb/s`;
  }

  private codec(kind: 'video' | 'audio', name: string): string | null {
    const was = kind === 'video' ? this.video : this.audio;
    if (was && was !== name) return `the ${kind} codec changed from ${was} to ${name} mid-stream`;
    if (kind === 'video') this.video = name as VideoCodec;
    else this.audio = name;
    return null;
  }

  private checkAudio(d: Buffer): string | null {
    if (d.length < 1) return null;
    const format = d[0] >> 4;
    let name: string | undefined;
    if (format === 10) name = 'aac';
    else if (format === 9 && d.length >= 5) name = AUDIO_FOURCC[d.toString('latin1', 1, 5)];
    if (!name) return `audio codec ${format === 9 ? JSON.stringify(d.toString('latin1', 1, 5)) : `FLV id ${format}`} is not accepted (AAC or Opus)`;
    return this.codec('audio', name);
  }

  private checkVideo(p: FlvPacket): string | null {
    const d = p.data;
    if (d.length < 2) return null;
    const keyframe = ((d[0] >> 4) & 7) === 1;
    let codec: VideoCodec | undefined;
    /** Where the decoder configuration record starts (sequence header), or the NAL units (frames). */
    let config = -1;
    let nals = -1;
    if (d[0] & 0x80) {
      // Enhanced RTMP: a FourCC names the codec; the packet type is the low nibble.
      if (d.length < 5) return null;
      const fourcc = d.toString('latin1', 1, 5);
      codec = VIDEO_FOURCC[fourcc];
      if (!codec) return `video codec ${JSON.stringify(fourcc)} is not accepted (H.264 or HEVC)`;
      const type = d[0] & 0x0f;
      if (type === 0) config = 5;
      else if (type === 1) nals = 8;
      else if (type === 3) nals = 5;
      else if (type === 6) return 'multitrack video is not accepted';
    } else {
      const id = d[0] & 0x0f;
      codec = FLV_VIDEO_IDS[id];
      if (!codec) return `video codec FLV id ${id} is not accepted (H.264 or HEVC)`;
      if (d[1] === 0) config = 5;
      else if (d[1] === 1) nals = 5;
    }
    const changed = this.codec('video', codec);
    if (changed) return changed;
    if (config >= 0) return this.sizeFromConfig(codec, d.subarray(config));
    if (nals < 0) return null;
    return this.countFrame(p.dts) ?? (keyframe ? this.sizeFromFrame(codec, d.subarray(nals)) : null);
  }

  private countFrame(dts: number): string | null {
    if (this.fpsStart < 0 || dts < this.fpsStart) {
      this.fpsStart = dts;
      this.frames = 0;
    }
    this.frames++;
    const span = dts - this.fpsStart;
    if (span < this.fpsWindowMs) return null;
    const fps = ((this.frames - 1) * 1000) / span;
    this.fpsStart = dts;
    this.frames = 1;
    return fps > LIVE_BOUNDS.maxFps + 0.5 ? `${Math.round(fps)} fps is over ${LIVE_BOUNDS.maxFps}` : null;
  }

  private checkSize(s: PictureSize | null): string | null {
    if (!s) return null;
    this.size = s;
    const long = Math.max(s.width, s.height);
    const short = Math.min(s.width, s.height);
    return long > LIVE_BOUNDS.maxLong || short > LIVE_BOUNDS.maxShort ? `${s.width}x${s.height} is over 1080p` : null;
  }

  /** AVCDecoderConfigurationRecord (ISO 14496-15 5.3.3.1) or HEVCDecoderConfigurationRecord (8.3.3.1). */
  private sizeFromConfig(codec: VideoCodec, r: Buffer): string | null {
    if (codec === 'h264') {
      if (r.length < 8) return null;
      this.nalLength = (r[4] & 3) + 1;
      const count = r[5] & 0x1f;
      let o = 6;
      for (let i = 0; i < count && o + 2 <= r.length; i++) {
        const len = r.readUInt16BE(o);
        const why = this.checkSize(h264SpsSize(r.subarray(o + 2, o + 2 + len)));
        if (why) return why;
        o += 2 + len;
      }
      return null;
    }
    if (r.length < 23) return null;
    this.nalLength = (r[21] & 3) + 1;
    let o = 23;
    for (let a = 0; a < r[22] && o + 3 <= r.length; a++) {
      const type = r[o] & 0x3f;
      const n = r.readUInt16BE(o + 1);
      o += 3;
      for (let i = 0; i < n && o + 2 <= r.length; i++) {
        const len = r.readUInt16BE(o);
        if (type === 33) {
          const why = this.checkSize(hevcSpsSize(r.subarray(o + 2, o + 2 + len)));
          if (why) return why;
        }
        o += 2 + len;
      }
    }
    return null;
  }

  /** An SPS carried in-band in a keyframe's length-prefixed NAL units. */
  private sizeFromFrame(codec: VideoCodec, b: Buffer): string | null {
    let o = 0;
    for (let i = 0; i < MAX_NALS && o + this.nalLength < b.length; i++) {
      const len = b.readUIntBE(o, this.nalLength);
      const nal = b.subarray(o + this.nalLength, o + this.nalLength + len);
      o += this.nalLength + len;
      if (!nal.length) continue;
      if (codec === 'h264' && (nal[0] & 0x1f) === 7) return this.checkSize(h264SpsSize(nal));
      if (codec === 'hevc' && ((nal[0] >> 1) & 0x3f) === 33) return this.checkSize(hevcSpsSize(nal));
    }
    return null;
  }
}
