// WebVTT in HLS and the MPEG-TS clock (RFC 8216 §3.5): a subtitle segment without
// X-TIMESTAMP-MAP has its cue time 0 at MPEG-TS time 0, but our TS segments start where ffmpeg's
// muxer put them (1.4 s in, with -copyts the source's own start), so hls.js showed every cue that
// much early. The map ties cue time 0 to the first presentation time of the published media.
import type { Storage } from '../storage';
import { keys } from '../storage';
import { outputKeys } from './keys';
import { readText } from './segments';

const TS_PACKET = 188;
const HEAD_BYTES = TS_PACKET * 1024;

/** The earliest PES presentation time (90 kHz) in the first packets of an MPEG-TS, or null. */
export function firstPts(ts: Buffer): number | null {
  let min: number | null = null;
  for (let at = 0; at + TS_PACKET <= ts.length; at += TS_PACKET) {
    if (ts[at] !== 0x47) return min;
    const start = (ts[at + 1] & 0x40) !== 0;
    const afc = (ts[at + 3] >> 4) & 0x3;
    if (!start || !(afc & 0x1)) continue;
    let p = at + 4;
    if (afc & 0x2) p += 1 + ts[p];
    if (p + 14 > at + TS_PACKET || ts[p] !== 0 || ts[p + 1] !== 0 || ts[p + 2] !== 1) continue;
    const streamId = ts[p + 3];
    // Audio (0xC0–0xDF) and video (0xE0–0xEF) PES carry the presentation times players start from.
    if (streamId < 0xc0 || streamId > 0xef) continue;
    if (!(ts[p + 7] & 0x80)) continue;
    const b = ts.subarray(p + 9, p + 14);
    const pts = (b[0] & 0x0e) * 2 ** 29 + b[1] * 2 ** 22 + (b[2] >> 1) * 2 ** 15 + b[3] * 2 ** 7 + (b[4] >> 1);
    min = min === null ? pts : Math.min(min, pts);
  }
  return min;
}

/** The first MPEG-TS segment's start (90 kHz) of the video's published master, or null (no master yet, fMP4 only). */
export async function publishedStartPts(storage: Storage, workspaceId: string, videoId: string): Promise<number | null> {
  const masterKey = keys.master(workspaceId, videoId);
  const master = await readText(storage, masterKey);
  if (!master) return null;
  const dir = masterKey.slice(0, masterKey.lastIndexOf('/') + 1);
  const variants = master.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#') && !l.includes('://'));
  for (const variant of variants.slice(0, 4)) {
    const playlistKey = `${dir}${variant.split('?')[0]}`;
    const playlist = await readText(storage, playlistKey);
    const segment = playlist?.split('\n').map((l) => l.trim()).find((l) => l && !l.startsWith('#'));
    if (!segment || !/\.ts(\?|$)/.test(segment) || segment.includes('://')) continue;
    const segKey = `${playlistKey.slice(0, playlistKey.lastIndexOf('/') + 1)}${segment.split('?')[0]}`;
    const object = await storage.get(segKey, { start: 0, end: HEAD_BYTES - 1 });
    if (!object) continue;
    const chunks: Buffer[] = [];
    for await (const c of object.body) chunks.push(c as Buffer);
    const pts = firstPts(Buffer.concat(chunks));
    if (pts !== null) return pts;
  }
  return null;
}

/** The WebVTT with `X-TIMESTAMP-MAP=MPEGTS:<pts>,LOCAL:00:00:00.000` in its header (replacing one it had). */
export function withTimestampMap(vtt: string, pts: number | null): string {
  if (pts === null) return vtt;
  const lines = vtt.split('\n');
  const end = lines.findIndex((l) => l.trim() === '');
  const header = (end < 0 ? lines : lines.slice(0, end)).filter((l) => !l.startsWith('X-TIMESTAMP-MAP='));
  const rest = end < 0 ? [] : lines.slice(end);
  return [...header, `X-TIMESTAMP-MAP=MPEGTS:${pts},LOCAL:00:00:00.000`, ...rest].join('\n');
}

/**
 * Stores a track's WebVTT twice: as sent (the download, `captions/<lang>.vtt`) and with
 * X-TIMESTAMP-MAP for the subtitle playlist, once the video has published media to map to.
 */
export async function putSubtitleFiles(storage: Storage, ws: string, videoId: string, lang: string, vtt: string): Promise<void> {
  const type = { contentType: 'text/vtt; charset=utf-8' };
  await storage.put(outputKeys.subtitleFile(ws, videoId, lang), vtt, type);
  const pts = await publishedStartPts(storage, ws, videoId);
  if (pts !== null) await storage.put(outputKeys.subtitleHlsFile(ws, videoId, lang), withTimestampMap(vtt, pts), type);
  else await storage.deletePrefix(outputKeys.subtitleHlsFile(ws, videoId, lang));
}
