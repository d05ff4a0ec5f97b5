export type MediaErrorCode = 'invalid_media' | 'no_video_stream';

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
