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
