import type { Config } from '../config';
import { LocalStorage } from './local';
import { S3Storage } from './s3';
import type { Storage } from './types';

export * from './types';
export { LocalStorage } from './local';
export { S3Storage } from './s3';

export function createStorage(config: Config): Storage {
  if (config.storage.driver === 's3') return new S3Storage(config.storage.s3);
  return new LocalStorage(config.storage.localDir, config.publicBaseUrl, config.upload.signingSecret);
}

/** Where things live, in one place (SPEC §3, §6). */
export const keys = {
  original: (workspaceId: string, videoId: string, filename: string) => `originals/${workspaceId}/${videoId}/${filename}`,
  /** Where an upload URL writes (SPEC §12): nothing reads it; completion moves it to the original. */
  upload: (workspaceId: string, videoId: string, nonce: string) => `uploads/${workspaceId}/${videoId}/${nonce}`,
  uploadsPrefix: (workspaceId: string, videoId: string) => `uploads/${workspaceId}/${videoId}/`,
  originalsPrefix: (workspaceId: string, videoId: string) => `originals/${workspaceId}/${videoId}/`,
  videoPrefix: (workspaceId: string, videoId: string) => `videos/${workspaceId}/${videoId}/`,
  master: (workspaceId: string, videoId: string) => `videos/${workspaceId}/${videoId}/hls/master.m3u8`,
  /** SPEC §21: the DASH manifest over the CMAF (HEVC/AV1) renditions' segments, next to the master. */
  dashManifest: (workspaceId: string, videoId: string) => `videos/${workspaceId}/${videoId}/hls/manifest.mpd`,
  rendition: (workspaceId: string, videoId: string, rung: string) => `videos/${workspaceId}/${videoId}/hls/${rung}/`,
  thumbnail: (workspaceId: string, videoId: string) => `videos/${workspaceId}/${videoId}/thumbnail.jpg`,
};

/** A filename safe to put in a key: no separators, no dot-segments, no control chars, ≤ 255 bytes. */
export function sanitizeFilename(name: string): string {
  let base = name.split(/[\\/]/).pop() ?? '';
  base = base.replace(/[\0-\x1f\x7f]/g, '').replace(/[^\p{L}\p{N}._ -]/gu, '_').trim();
  base = base.replace(/^\.+/, '');
  if (!base) base = 'video';
  while (Buffer.byteLength(base) > 255) base = base.slice(0, -1);
  return base;
}
