export type MediaErrorCode = 'invalid_media' | 'no_video_stream' | 'media_too_large';

/** The input itself is unusable; retrying will not help. `message` is safe to show to users. */
export class MediaError extends Error {
  override readonly name = 'MediaError';
  constructor(
    readonly code: MediaErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

// Decoder/demuxer messages that mean the input is broken or unsupported (e.g. a truncated upload
// that ffprobe accepted because the moov atom came first), as opposed to an environment failure.
const INVALID_MEDIA_PATTERNS: readonly RegExp[] = [
  /Invalid data found when processing input/i,
  /moov atom not found/i,
  /partial file/i,
  /Error while decoding/i,
  /error reading header/i,
  /could not find codec parameters/i,
  /Decoder \(codec [^)]*\) not found/i,
  /Stream map '[^']*' matches no streams/i,
  /Invalid NAL unit size/i,
  /no frame!/i,
];

/** 'invalid_media' when ffmpeg's stderr shows the input cannot be decoded; null otherwise. */
export function classifyFfmpegError(stderr: string): 'invalid_media' | null {
  return INVALID_MEDIA_PATTERNS.some((re) => re.test(stderr)) ? 'invalid_media' : null;
}

// The input allow-lists refused the file (SPEC §12): a playlist, a list, an image sequence, a
// reference to another file or URL, or a container we do not accept.
const REFUSED_INPUT_PATTERNS: readonly RegExp[] = [/Format not on whitelist/i, /Protocol '[^']*' not on whitelist/i, /not on whitelist/i];

/** True when ffmpeg/ffprobe's stderr shows an allow-list refused the input or something it referenced. */
export function isRefusedInput(stderr: string): boolean {
  return REFUSED_INPUT_PATTERNS.some((re) => re.test(stderr));
}

export const REFUSED_INPUT_MESSAGE =
  'The file is not a single self-contained video in an accepted container (MP4/MOV, Matroska/WebM, AVI, FLV, MPEG-TS/PS, MXF, Ogg); ' +
  'playlists, concat lists, image sequences and references to other files or URLs are refused';

// Transport failures reading a remote (S3 presigned) input: storage was unreachable, which says
// nothing about the file. They must stay retryable, or a storage outage would fail good videos.
const TRANSPORT_PATTERNS: readonly RegExp[] = [
  /Connection refused/i,
  /Connection reset/i,
  /Connection timed out/i,
  /Network is unreachable/i,
  /No route to host/i,
  /Failed to resolve hostname/i,
  /Server returned 5\d\d/i,
];

/** True when stderr shows the input could not be fetched (storage down), not that it is bad. */
export function isTransportError(stderr: string): boolean {
  return TRANSPORT_PATTERNS.some((re) => re.test(stderr));
}

/** Whether stderr shows the process ran out of its address-space or file-size limit. */
export function limitInStderr(stderr: string): 'memory' | 'output file size' | null {
  if (/File too large|EFBIG/i.test(stderr)) return 'output file size';
  if (/Cannot allocate memory|Out of memory|ENOMEM/i.test(stderr)) return 'memory';
  return null;
}
