// Every call the CLI makes to the API, in one place. The read shape is the generated contract's
// (@vidhost/client, imported for its types only), so a change to it fails the CLI's typecheck.
import type { components } from '@vidhost/client';

export type VideoRead = components['schemas']['Video'];

export const tusEndpoint = (apiUrl: string) => `${apiUrl}/v1/upload/tus`;
export const authHeaders = (apiKey: string) => ({ Authorization: `Bearer ${apiKey}` });

/** A tus upload URL names its video: `/upload/tus/<ws>~<uuid>~tus-<nonce>`. */
export function videoIdFromUploadUrl(url: string): string | null {
  const m = /~([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})~/.exec(url);
  return m ? `vid_${m.slice(1).join('')}` : null;
}

export async function getVideo(apiUrl: string, apiKey: string, id: string): Promise<VideoRead> {
  const r = await fetch(`${apiUrl}/v1/videos/${encodeURIComponent(id)}`, { headers: authHeaders(apiKey) });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(`GET /v1/videos/${id}: ${r.status} ${body?.error?.message ?? ''}`.trim());
  return body as VideoRead;
}
