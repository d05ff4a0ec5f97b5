import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadPlaybackVideo } from '../../lib/playback/access';
import { cdnGet } from '../outputs/helpers';
import { waitUntil } from '../playback/helpers';
import { putFile, waitForVideo } from '../support/flow';
import type { Stack } from '../support/stack';
import type { AudioSource } from './media';

/** init (with the source's own Content-Type) → PUT → complete. */
export async function upload(s: Stack, src: AudioSource, extra: Record<string, unknown> = {}): Promise<string> {
  const init = await s.post('/v1/upload/init', { filename: path.basename(src.file), size: fs.statSync(src.file).size, content_type: src.contentType, visibility: 'public', ...extra });
  assert.equal(init.status, 201, JSON.stringify(init.body));
  const put = await putFile(init.body.upload_url, src.file, src.contentType, init.body.upload_headers);
  assert.equal(put.status, 200, await put.text());
  const done = await s.post('/v1/upload/complete', { video_id: init.body.video_id });
  assert.equal(done.status, 202, JSON.stringify(done.body));
  return init.body.video_id as string;
}

/** Until every rendition is ready and the row agrees (the CDN reads the row). */
export async function settled(s: Stack, id: string): Promise<Record<string, any>> {
  const v = await waitForVideo(s, id, (x) => x.status === 'failed' || (x.status === 'ready' && x.renditions.every((r: { status: string }) => r.status === 'ready')), 150_000);
  if (v.status === 'ready') {
    await waitUntil(async () => {
      const row = await loadPlaybackVideo(s.db, v.uuid);
      return row?.status === 'ready' && !row.growing;
    }, `video ${id} ready in the database`);
    return (await s.get(`/v1/videos/${id}`).expect(200)).body;
  }
  return v;
}

export const cdnText = async (s: Stack, p: string): Promise<string> => (await cdnGet(s, p).expect(200)).body.toString('utf8');

/** The EXT-X-MEDIA:TYPE=AUDIO lines of a master, as attribute maps. */
export function audioMedia(master: string): Array<Record<string, string>> {
  return master
    .split('\n')
    .filter((l) => l.startsWith('#EXT-X-MEDIA:TYPE=AUDIO'))
    .map((l) => Object.fromEntries([...l.matchAll(/([A-Z-]+)=("[^"]*"|[^,]*)/g)].map((m) => [m[1], m[2].replace(/^"|"$/g, '')])));
}
