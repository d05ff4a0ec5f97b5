import { randomToken } from '../../lib/ids';
import { keys } from '../../lib/storage';

/**
 * A tus upload's id is its staging key, `uploads/<ws>/<video uuid>/tus-<nonce>`, so the stores
 * write where nothing reads (SPEC §12) and a video's sweep removes it. In URLs the slashes become
 * `~`: `/upload/tus/<ws>~<uuid>~tus-<nonce>`. The 96-bit nonce makes the URL a capability.
 */
const TOKEN = /^(ws_[A-Za-z0-9]+)~([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})~(tus-[A-Za-z0-9_-]{16,64})$/;

export function newTusUploadId(workspaceId: string, videoId: string): string {
  return keys.upload(workspaceId, videoId, `tus-${randomToken(12)}`);
}

export function tusUrlToken(uploadId: string): string {
  return uploadId.replace(/^uploads\//, '').split('/').join('~');
}

export function parseTusUrlToken(token: string): { uploadId: string; workspaceId: string; videoId: string } | null {
  const m = TOKEN.exec(token);
  if (!m) return null;
  return { uploadId: keys.upload(m[1], m[2], m[3]), workspaceId: m[1], videoId: m[2] };
}

export const tusUrl = (publicBaseUrl: string, uploadId: string) => `${publicBaseUrl}/upload/tus/${tusUrlToken(uploadId)}`;
