/** The passthrough's rendition name: its files are under `hls/source/` (activities/transcode/ladder.ts). */
export const PASSTHROUGH_RENDITION = 'source';

/** `videos.passthrough_rendition`: set while the published master lists the passthrough. */
export interface PassthroughEntry {
  width: number;
  height: number;
  bitrate: number;
}

/** The passthrough as a ready rendition, as reads and the image renderer see it. */
export function passthroughView(entry: PassthroughEntry | null | undefined): { name: string; width: number; height: number; bitrate: number; status: 'ready'; progress: number } | null {
  if (!entry) return null;
  return { name: PASSTHROUGH_RENDITION, width: entry.width, height: entry.height, bitrate: Math.round(entry.bitrate), status: 'ready', progress: 100 };
}

/** `videos.on_request_renditions`: a rung the master lists while its segments are encoded on request (issue 47). */
export interface OnRequestEntry {
  name: string;
  width: number;
  height: number;
  bitrate: number;
}

/**
 * The renditions as images see them: a rung still encoded on request plays (its segments are made
 * when asked, lib/playback/jit.ts), so an image may be rendered from it as from a ready one.
 */
export function withOnRequest<R extends { name: string; status: string }>(renditions: R[], entries: OnRequestEntry[] | null | undefined): R[] {
  if (!entries?.length) return renditions;
  const names = new Set(entries.map((e) => e.name));
  return renditions.map((r) => (names.has(r.name) && r.status !== 'ready' ? { ...r, status: 'ready' } : r));
}
