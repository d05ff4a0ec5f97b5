const TYPES: Record<string, string> = {
  mp4: 'video/mp4',
  m4v: 'video/mp4',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
  webm: 'video/webm',
  avi: 'video/x-msvideo',
  flv: 'video/x-flv',
  ts: 'video/mp2t',
  mts: 'video/mp2t',
  mpg: 'video/mpeg',
  mpeg: 'video/mpeg',
  mxf: 'video/mxf',
  ogv: 'video/ogg',
};

/** The declared type of a file by its extension; the server judges the bytes anyway (SPEC §12). */
export const videoTypeOf = (file: string) => TYPES[file.split('.').pop()?.toLowerCase() ?? ''] ?? 'video/mp4';
