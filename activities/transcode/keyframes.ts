// The source's keyframe index (SPEC §23): from the MP4/MOV sample tables when the original is
// one (reads `moov` only, whatever the length), else one packet scan without decoding.
import { mp4KeyframeIndex, type IndexResult, type KeyframeIndex } from '../../lib/media/mp4index';
import type { MediaTools, SafeInput } from '../../lib/media/tools';
import type { Storage } from '../../lib/storage';

/** A ranged reader over a stored object (local file or S3 object alike). */
export function storageReader(storage: Storage, key: string) {
  return async (offset: number, length: number): Promise<Uint8Array> => {
    if (length <= 0) return new Uint8Array(0);
    const object = await storage.get(key, { start: offset, end: offset + length - 1 });
    if (!object) throw new Error(`missing ${key}`);
    const chunks: Buffer[] = [];
    for await (const c of object.body) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  };
}

/** ffprobe arguments listing the first video stream's packets as `pts_time,dts_time,size,flags`. */
export function packetScanArgs(input: string, inputArgs: readonly string[] = []): string[] {
  return ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'packet=pts_time,dts_time,size,flags', '-of', 'csv=p=0', ...inputArgs, '-i', input];
}

/** The index from packetScanArgs' output (decode order). */
export function parsePacketScan(csv: string): IndexResult {
  const keyframes: KeyframeIndex['keyframes'] = [];
  let bytes = 0;
  let firstDts: number | null = null;
  let end = 0;
  for (const line of csv.split('\n')) {
    const [p, d, size, flags] = line.trim().split(',');
    if (flags === undefined) continue;
    const pts = Number(p);
    const dts = Number(d);
    if (d !== '' && Number.isFinite(dts) && firstDts === null) firstDts = dts;
    if (p !== '' && Number.isFinite(pts)) {
      if (flags.includes('K')) keyframes.push({ time: pts, bytesBefore: bytes });
      end = Math.max(end, pts);
    }
    bytes += Number(size) || 0;
  }
  if (keyframes.length === 0) return { ok: false, reason: 'no keyframe' };
  keyframes.sort((a, b) => a.time - b.time);
  return { ok: true, index: { keyframes, totalBytes: bytes, durationSeconds: end, firstDts: firstDts ?? 0 } };
}

/** The index of a stored original opened as `input`; `mov` reads the sample tables, others scan packets. */
export async function keyframeIndex(storage: Storage, media: MediaTools, key: string, input: SafeInput, signal?: AbortSignal): Promise<IndexResult & { from: 'moov' | 'scan' }> {
  if (input.demuxer === 'mov') {
    const head = await storage.head(key);
    if (head) {
      const r = await mp4KeyframeIndex(storageReader(storage, key), head.size);
      // A refused table falls back to the scan only when the file is not MP4-shaped at all; a lie is refused.
      if (r.ok || !/^(no moov box|fragmented MP4)$/.test(r.reason)) return { ...r, from: 'moov' };
    }
  }
  return { ...parsePacketScan(await media.ffprobe(packetScanArgs(input.path, input.inputArgs), input, signal)), from: 'scan' };
}
