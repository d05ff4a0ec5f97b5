// Pure: rungs in other codecs than H.264 (SPEC §21), as CMAF (fMP4) HLS renditions, and their
// RFC 6381 CODECS strings. No I/O, no Node built-ins: imported by workflow code.
import { GLOBAL_ARGS, h264Level, joinPath, keyframeArgs, levelString, seconds, videoRateArgs, type RateControl } from './args';
import type { Rung } from './ladder';
import { markedFilter, type Mark } from './watermark';

export const VIDEO_CODECS = ['h264', 'hevc', 'av1'] as const;
export type VideoCodec = (typeof VIDEO_CODECS)[number];

/**
 * Capped CRF per codec, chosen to land near x264's CRF 23 in quality (x265 CRF 26 and SVT-AV1
 * CRF 35 are the usual equivalents); the rung's bitrate caps every codec alike.
 */
export const CODEC_CRF: Readonly<Record<VideoCodec, number>> = Object.freeze({ h264: 23, hevc: 26, av1: 35 });
/** SVT-AV1 preset: 10 of 0 (slowest) … 13; the fastest presets that still beat x264 in bytes. */
export const SVT_AV1_PRESET = '10';
export const X265_PRESET = 'veryfast';

/** A codec's rendition folder: H.264 keeps the rung's name ("720p"), others add the codec ("720p-av1"). */
export const codecRenditionName = (rungName: string, codec: VideoCodec): string => (codec === 'h264' ? rungName : `${rungName}-${codec}`);

/** The encoder options of one rung in `codec` (rate control, keyframes on segment boundaries). */
export function videoEncoderArgs(codec: VideoCodec, rung: Rung, o: { fps?: number | null; segmentSeconds: number; preset?: string; rateControl?: RateControl }): string[] {
  const rc: RateControl = o.rateControl ?? { mode: 'crf', crf: CODEC_CRF[codec] };
  const gop = o.fps && o.fps > 0 ? Math.max(1, Math.round(o.fps * o.segmentSeconds)) : null;
  if (codec === 'h264') {
    return ['-c:v', 'libx264', '-preset', o.preset ?? 'veryfast', '-profile:v', 'high', '-level:v', levelString(h264Level(rung, o.fps)), '-pix_fmt', 'yuv420p', ...videoRateArgs(rung, rc), ...keyframeArgs(o.segmentSeconds, o.fps)];
  }
  if (codec === 'hevc') {
    // hvc1 (parameter sets in the sample entry) is what Apple and MSE want for HEVC in fMP4.
    const params = ['log-level=error', 'scenecut=0', 'open-gop=0', ...(gop ? [`keyint=${gop}`, `min-keyint=${gop}`] : [])].join(':');
    return ['-c:v', 'libx265', '-preset', o.preset ?? X265_PRESET, '-tag:v', 'hvc1', '-pix_fmt', 'yuv420p', ...videoRateArgs(rung, rc), '-force_key_frames', `expr:gte(t,n_forced*${seconds(o.segmentSeconds)})`, '-x265-params', params];
  }
  // SVT-AV1 honours -maxrate with -crf as "capped CRF"; -g puts a keyframe on every segment boundary.
  return ['-c:v', 'libsvtav1', '-preset', o.preset ?? SVT_AV1_PRESET, '-pix_fmt', 'yuv420p', ...videoRateArgs(rung, rc), ...(gop ? ['-g', String(gop)] : []), '-svtav1-params', 'scd=0'];
}

export function cmafHlsArgs(outputDir: string, segmentSeconds: number): string[] {
  return [
    '-f', 'hls',
    '-hls_time', seconds(segmentSeconds),
    '-hls_playlist_type', 'vod',
    '-hls_segment_type', 'fmp4',
    '-hls_fmp4_init_filename', 'init.mp4',
    '-hls_flags', 'independent_segments',
    '-hls_segment_filename', joinPath(outputDir, 'seg_%05d.m4s'),
    joinPath(outputDir, 'index.m3u8'),
  ];
}

/**
 * One rung in `codec`, video only, as a CMAF HLS rendition: `<outputDir>/init.mp4`,
 * `seg_%05d.m4s` and `index.m3u8` (EXT-X-MAP). The same segments serve the DASH manifest.
 */
export function cmafRungArgs(o: {
  input: string;
  inputArgs?: readonly string[];
  outputDir: string;
  rung: Rung;
  codec: VideoCodec;
  hasAudio?: false;
  segmentSeconds: number;
  fps?: number | null;
  preset?: string;
  rateControl?: RateControl;
  mark?: Mark | null;
}): string[] {
  return [
    ...GLOBAL_ARGS,
    ...(o.inputArgs ?? []),
    '-i', o.input,
    '-map', '0:v:0',
    '-vf', markedFilter({ chain: `scale=${o.rung.width}:${o.rung.height}`, frame: o.rung, mark: o.mark }),
    ...videoEncoderArgs(o.codec, o.rung, { fps: o.fps, segmentSeconds: o.segmentSeconds, preset: o.preset, rateControl: o.rateControl }),
    '-an',
    ...cmafHlsArgs(o.outputDir, o.segmentSeconds),
  ];
}

/** The CMAF copy of an audio rendition (SPEC §19 `a0` → `a0-cmaf`), a sibling folder under `hls/audio/`. */
export const cmafAudioRendition = (rendition: string): string => `${rendition}-cmaf`;

/**
 * Issue 28 "audio once": an AAC audio rendition's MPEG-TS segments (concatenated into `input`; ADTS → MP4 config, `aac_adtstoasc`)
 * repackaged as a CMAF HLS rendition by stream copy, no re-encode: `init.mp4`, `seg_%05d.m4s`
 * and `index.m3u8`, cut at the same segment duration as the video. Timestamps start at 0 like
 * the CMAF video encodes (which are made without -copyts).
 */
export function cmafAudioArgs(o: { input: string; inputArgs?: readonly string[]; outputDir: string; segmentSeconds: number }): string[] {
  return [...GLOBAL_ARGS, ...(o.inputArgs ?? []), '-i', o.input, '-map', '0:a:0', '-vn', '-sn', '-dn', '-c:a', 'copy', '-bsf:a', 'aac_adtstoasc', ...cmafHlsArgs(o.outputDir, o.segmentSeconds)];
}

/**
 * RFC 6381 CODECS of an encoded stream, from what ffprobe reads back (profile name and level as
 * ffprobe prints them: HEVC level = general_level_idc, e.g. 93 for 3.1; AV1 level = seq_level_idx).
 * HEVC: Main profile, Main tier, progressive-source constraint flags (x265's), `hvc1.1.6.L93.B0`.
 * AV1: Main profile 8-bit, Main tier, `av01.0.05M.08`.
 */
export function cmafCodecString(codec: VideoCodec, probed: { profile: string | null; level: number | null }, rung?: Rung, fps?: number | null): string {
  if (codec === 'hevc') {
    const main10 = probed.profile === 'Main 10';
    return `hvc1.${main10 ? 2 : 1}.${main10 ? 4 : 6}.L${probed.level ?? 93}.B0`;
  }
  if (codec === 'av1') return `av01.0.${String(probed.level ?? 8).padStart(2, '0')}M.08`;
  return `avc1.6400${h264Level(rung ?? { width: 1920, height: 1080, maxrate: 0, bufsize: 0 }, fps).toString(16).padStart(2, '0')}`;
}
