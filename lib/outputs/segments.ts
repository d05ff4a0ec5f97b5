import fs from 'node:fs/promises';
import { keys, type Storage } from '../storage';

export interface Segment {
  uri: string;
  start: number;
  duration: number;
}

/** The segments of a VOD media playlist with their start times (sum of the EXTINFs before). */
export function parseMediaPlaylist(text: string): Segment[] {
  const out: Segment[] = [];
  let pending: number | null = null;
  let t = 0;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const inf = /^#EXTINF:([0-9.]+)/.exec(line);
    if (inf) pending = Number(inf[1]);
    else if (line && !line.startsWith('#') && pending !== null) {
      // Only plain segment names: a playlist is ours, but never let it point elsewhere.
      if (!/^seg_[0-9]{5,6}\.ts$/.test(line)) throw new Error(`unexpected segment URI in a rendition playlist: ${line}`);
      out.push({ uri: line, start: t, duration: pending });
      t += pending;
      pending = null;
    }
  }
  return out;
}

/** The segments that overlap [from, to]. */
export function segmentsFor(segments: readonly Segment[], from: number, to: number): Segment[] {
  const hit = segments.filter((s) => s.start + s.duration > from && s.start <= to);
  return hit.length > 0 ? hit : segments.slice(-1);
}

/** A stored text file (a playlist), or null when it is not there. */
export async function readText(storage: Storage, key: string): Promise<string | null> {
  const object = await storage.get(key);
  if (!object) return null;
  const chunks: Buffer[] = [];
  for await (const c of object.body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function renditionSegments(storage: Storage, ws: string, vid: string, rung: string): Promise<Segment[]> {
  const text = await readText(storage, `${keys.rendition(ws, vid, rung)}index.m3u8`);
  if (text === null) throw new Error(`rendition ${rung} has no playlist`);
  return parseMediaPlaylist(text);
}

/**
 * Writes the given MPEG-TS segments of a rendition, byte after byte, into one file: segments of
 * one encode continue each other's timestamps and counters, so the result is one valid TS
 * stream, a single self-contained input for ffmpeg (SPEC §12 forbids playlists as inputs).
 */
export async function joinSegments(
  storage: Storage,
  ws: string,
  vid: string,
  rung: string,
  segments: readonly Segment[],
  outFile: string,
  onSegment?: () => void,
  /** SPEC §23: makes a just-in-time segment exist (cut on demand); true when it now does. */
  ensure?: (uri: string) => Promise<boolean>,
): Promise<void> {
  const prefix = keys.rendition(ws, vid, rung);
  const out = await fs.open(outFile, 'w');
  try {
    for (const seg of segments) {
      let object = await storage.get(prefix + seg.uri);
      if (!object && ensure && (await ensure(seg.uri))) object = await storage.get(prefix + seg.uri);
      if (!object) throw new Error(`segment ${rung}/${seg.uri} is missing`);
      // Chunk by chunk: constant memory however long the rendition.
      for await (const chunk of object.body) await out.write(chunk as Buffer);
      onSegment?.();
    }
  } finally {
    await out.close();
  }
}
