// Pure: which containers user media may be opened as, and the input options that enforce it
// (SPEC §12). Every ffmpeg/ffprobe run on an upload opens exactly one self-contained file.

/**
 * ffmpeg demuxer names (`ffmpeg -demuxers`) allowed for uploads. None of them opens another file
 * or URL by itself; `mov` can (data references), which `-enable_drefs 0` keeps off. Playlists
 * (hls, dash), lists (concat), image sequences (image2), tty/text and every `*_pipe` are absent.
 */
export const ALLOWED_DEMUXERS: readonly string[] = Object.freeze([
  'mov', // MP4, MOV, M4V, 3GP, MJ2
  'matroska', // Matroska, WebM
  'avi',
  'flv',
  'mpegts',
  'mpeg', // MPEG-PS (VOB)
  'mxf',
  'ogg',
  'wav',
  'h264', // raw elementary streams
  'hevc',
  'mpegvideo',
  // Audio-only containers: never a video, but they deserve `no_video_stream`, not `invalid_media`.
  'mp3',
  'aac',
  'flac',
]);

/** The only protocols an input may use: a local file, or (S3) one presigned HTTPS/HTTP URL. */
export const LOCAL_PROTOCOLS = 'file';
export const REMOTE_PROTOCOLS = 'https,http,tcp,tls';

/**
 * The allowed demuxer that produced ffprobe's `format_name` (e.g. "mov,mp4,m4a,3gp,3g2,mj2" →
 * "mov", "matroska,webm" → "matroska"), or null when none did.
 */
export function allowedDemuxer(formatName: string | null | undefined): string | null {
  if (!formatName) return null;
  const names = formatName.split(',').map((n) => n.trim());
  return ALLOWED_DEMUXERS.find((d) => names.includes(d)) ?? null;
}

export const isRemoteInput = (input: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(input) && !input.startsWith('file:');

export type SafeInputOptions = {
  /** The demuxer chosen from the probe; omitted only for the probe itself (auto-detection among the allowed). */
  format?: string | null;
  /** An http(s) URL (S3 presigned GET) rather than a local path. */
  remote?: boolean;
};

/**
 * Input options to put right before `-i <input>` (ffmpeg and ffprobe alike): the protocol and
 * demuxer allow-lists, the demuxer itself once known, and no data references in MOV/MP4.
 */
export function safeInputArgs(options: SafeInputOptions = {}): string[] {
  const { format } = options;
  if (format != null && !ALLOWED_DEMUXERS.includes(format)) throw new RangeError(`demuxer ${format} is not allowed`);
  return [
    '-protocol_whitelist', options.remote ? REMOTE_PROTOCOLS : LOCAL_PROTOCOLS,
    '-format_whitelist', format ?? ALLOWED_DEMUXERS.join(','),
    ...(format ? ['-f', format] : []),
    ...(format === 'mov' ? ['-enable_drefs', '0'] : []),
  ];
}

const INPUT_GROUP_END = new Set(['-i']);

/**
 * True when every `-i` in `args` is preceded (within its own group of input options) by both
 * allow-lists. The one place that runs ffmpeg on user media refuses arguments that fail this.
 */
export function hasSafeInputs(args: readonly string[]): boolean {
  let groupStart = 0;
  let inputs = 0;
  for (let i = 0; i < args.length; i++) {
    if (!INPUT_GROUP_END.has(args[i])) continue;
    const group = args.slice(groupStart, i);
    const value = (name: string): string | undefined => {
      const at = group.lastIndexOf(name);
      return at >= 0 ? group[at + 1] : undefined;
    };
    const protocols = value('-protocol_whitelist');
    const formats = value('-format_whitelist');
    if (protocols !== LOCAL_PROTOCOLS && protocols !== REMOTE_PROTOCOLS) return false;
    if (!formats || formats.split(',').some((f) => !ALLOWED_DEMUXERS.includes(f))) return false;
    const forced = value('-f');
    if (forced !== undefined && !ALLOWED_DEMUXERS.includes(forced)) return false;
    inputs++;
    groupStart = i + 2;
  }
  return inputs > 0;
}
