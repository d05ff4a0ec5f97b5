// Pure: the keyframe index of an MP4/MOV source read from its sample tables (SPEC §23,
// docs/transcoding.md "Just-in-time packaging"). Reading `moov` costs its size (tens of KB for
// two hours), not the file's: a packet scan reads every byte. Every count and size is bounded,
// and a table that contradicts itself or the file is refused (null with a reason), never
// trusted. No Node built-ins: bytes come from a reader the caller supplies.

/** Reads `length` bytes at `offset` (fewer only at the end of the file). */
export type ByteReader = (offset: number, length: number) => Promise<Uint8Array>;

/** A keyframe: presentation time (s) and the video bytes before it in decode order. */
export type IndexedKeyframe = { time: number; bytesBefore: number };

export type KeyframeIndex = {
  keyframes: IndexedKeyframe[];
  /** Every video sample's bytes. */
  totalBytes: number;
  /** Presentation end of the last sample (s). */
  durationSeconds: number;
  /** Decode time of the first sample (s): negative when B-frames lead (the edit list's shift). */
  firstDts: number;
};

export type IndexResult = { ok: true; index: KeyframeIndex } | { ok: false; reason: string };

/** Bounds: a `moov` above this is refused (a 10-hour 60 fps file's is under 20 MB). */
export const MAX_MOOV_BYTES = 64 * 1024 * 1024;
/** Samples in the video track: 10 hours at 60 fps is 2.16 M. */
export const MAX_SAMPLES = 2_500_000;
/** Table entries (stts/ctts/stss/stco runs) beyond the sample count are a lie. */
const MAX_TOP_BOXES = 1000;

const no = (reason: string): IndexResult => ({ ok: false, reason });

type Box = { type: string; start: number; header: number; size: number };

function u32(b: Uint8Array, o: number): number {
  return ((b[o] << 24) >>> 0) + (b[o + 1] << 16) + (b[o + 2] << 8) + b[o + 3];
}
function i32(b: Uint8Array, o: number): number {
  return u32(b, o) | 0;
}
function u64(b: Uint8Array, o: number): number {
  return u32(b, o) * 2 ** 32 + u32(b, o + 4);
}
function i64(b: Uint8Array, o: number): number {
  const hi = i32(b, o);
  return hi * 2 ** 32 + u32(b, o + 4);
}
const fourcc = (b: Uint8Array, o: number): string => String.fromCharCode(b[o], b[o + 1], b[o + 2], b[o + 3]);

/** The child boxes of `b[from, to)`; null when a size runs past its parent. */
function children(b: Uint8Array, from: number, to: number): Box[] | null {
  const out: Box[] = [];
  let o = from;
  while (o + 8 <= to) {
    let size = u32(b, o);
    const type = fourcc(b, o + 4);
    let header = 8;
    if (size === 1) {
      if (o + 16 > to) return null;
      size = u64(b, o + 8);
      header = 16;
    } else if (size === 0) size = to - o;
    if (size < header || o + size > to) return null;
    out.push({ type, start: o, header, size });
    o += size;
    if (out.length > 10_000) return null;
  }
  return out;
}

const find = (boxes: Box[] | null, type: string): Box | undefined => boxes?.find((x) => x.type === type);
const body = (b: Uint8Array, box: Box): [number, number] => [box.start + box.header, box.start + box.size];

/** Finds `moov` among the top-level boxes; refuses fragmented files (their index is in `moof`s). */
async function readMoov(read: ByteReader, fileSize: number): Promise<Uint8Array | string> {
  let o = 0;
  for (let n = 0; n < MAX_TOP_BOXES && o + 8 <= fileSize; n++) {
    const h = await read(o, 16);
    if (h.length < 8) break;
    let size = u32(h, 0);
    const type = fourcc(h, 4);
    if (size === 1) {
      if (h.length < 16) return 'truncated box header';
      size = u64(h, 8);
    } else if (size === 0) size = fileSize - o;
    if (size < 8) return `box ${JSON.stringify(type)} has an invalid size`;
    if (type === 'moof') return 'fragmented MP4';
    if (type === 'moov') {
      if (size > MAX_MOOV_BYTES) return `moov is ${size} bytes (over ${MAX_MOOV_BYTES})`;
      if (o + size > fileSize) return 'moov runs past the end of the file';
      const moov = await read(o, size);
      if (moov.length !== size) return 'moov is truncated';
      return moov;
    }
    o += size;
  }
  return 'no moov box';
}

/** The keyframe index of the first video track, from `moov` alone; `fileSize` bounds what it may claim. */
export async function mp4KeyframeIndex(read: ByteReader, fileSize: number): Promise<IndexResult> {
  const moov = await readMoov(read, fileSize);
  if (typeof moov === 'string') return no(moov);
  const top = children(moov, 8, moov.length);
  if (!top) return no('moov has a box that runs past its end');
  const mvhd = find(top, 'mvhd');
  if (!mvhd) return no('no mvhd');
  const mv = mvhd.start + mvhd.header;
  const movieScale = moov[mv] === 1 ? u32(moov, mv + 20) : u32(moov, mv + 12);
  if (!movieScale) return no('movie timescale is 0');
  for (const trak of top.filter((x) => x.type === 'trak')) {
    const tk = children(moov, ...body(moov, trak));
    const mdia = find(tk, 'mdia');
    if (!mdia) continue;
    const md = children(moov, ...body(moov, mdia));
    const hdlr = find(md, 'hdlr');
    if (!hdlr || fourcc(moov, hdlr.start + hdlr.header + 8) !== 'vide') continue;
    return videoTrack(moov, tk!, md!, movieScale, fileSize);
  }
  return no('no video track');
}

function videoTrack(b: Uint8Array, tk: Box[], md: Box[], movieScale: number, fileSize: number): IndexResult {
  const mdhd = find(md, 'mdhd');
  if (!mdhd) return no('no mdhd');
  const h = mdhd.start + mdhd.header;
  const scale = b[h] === 1 ? u32(b, h + 20) : u32(b, h + 12);
  if (!scale) return no('media timescale is 0');
  const minf = find(md, 'minf');
  const stblBox = minf ? find(children(b, ...body(b, minf)), 'stbl') : undefined;
  if (!stblBox) return no('no sample table');
  const stbl = children(b, ...body(b, stblBox));
  const stts = find(stbl, 'stts');
  const stsz = find(stbl, 'stsz');
  if (!stts || !stsz) return no('no stts/stsz (stz2 is not read)');
  const ctts = find(stbl, 'ctts');
  const stss = find(stbl, 'stss');
  const chunks = find(stbl, 'stco') ?? find(stbl, 'co64');

  // Sample sizes: the count, and a bound against the file.
  const z = stsz.start + stsz.header;
  const fixed = u32(b, z + 4);
  const n = u32(b, z + 8);
  if (n === 0) return no('the video track has no samples');
  if (n > MAX_SAMPLES) return no(`${n} video samples (over ${MAX_SAMPLES})`);
  if (!fixed && z + 12 + 4 * n > stsz.start + stsz.size) return no('stsz is shorter than its sample count');
  const sizeOf = (i: number) => (fixed ? fixed : u32(b, z + 12 + 4 * i));

  // Every chunk must start inside the file: a moov describing data the file lacks is a lie.
  if (chunks) {
    const c = chunks.start + chunks.header;
    const count = u32(b, c + 4);
    const width = chunks.type === 'co64' ? 8 : 4;
    if (c + 8 + width * count > chunks.start + chunks.size) return no('chunk table is shorter than its count');
    for (let i = 0; i < count; i++) {
      const off = width === 8 ? u64(b, c + 8 + 8 * i) : u32(b, c + 8 + 4 * i);
      if (off >= fileSize) return no('a chunk starts past the end of the file');
    }
  }

  // Edit list: leading empty edits delay the track; one media edit shifts it; more are refused.
  let delay = 0;
  let shift = 0;
  const edts = find(tk, 'edts');
  const elst = edts ? find(children(b, ...body(b, edts)), 'elst') : undefined;
  if (elst) {
    const e = elst.start + elst.header;
    const v1 = b[e] === 1;
    const count = u32(b, e + 4);
    const entry = v1 ? 20 : 12;
    if (e + 8 + entry * count > elst.start + elst.size) return no('elst is shorter than its count');
    let media = 0;
    for (let i = 0; i < count; i++) {
      const o = e + 8 + entry * i;
      const duration = v1 ? u64(b, o) : u32(b, o);
      const time = v1 ? i64(b, o + 8) : i32(b, o + 4);
      if (time === -1) {
        if (media > 0) return no('an empty edit after the media edit');
        delay += duration / movieScale;
      } else {
        if (++media > 1) return no(`an edit list with ${media} media edits`);
        if (time < 0) return no('a negative edit media time');
        shift = time;
      }
    }
  }

  // Decode times (stts runs), composition offsets (ctts runs), sync samples (stss).
  const t = stts.start + stts.header;
  const runs = u32(b, t + 4);
  if (t + 8 + 8 * runs > stts.start + stts.size) return no('stts is shorter than its count');
  let ctRuns = 0;
  let ct = 0;
  if (ctts) {
    ct = ctts.start + ctts.header;
    ctRuns = u32(b, ct + 4);
    if (ct + 8 + 8 * ctRuns > ctts.start + ctts.size) return no('ctts is shorter than its count');
  }
  let syncLeft = Number.POSITIVE_INFINITY;
  let s = 0;
  let syncAt = 0;
  if (stss) {
    s = stss.start + stss.header;
    syncLeft = u32(b, s + 4);
    if (s + 8 + 4 * syncLeft > stss.start + stss.size) return no('stss is shorter than its count');
    syncAt = syncLeft > 0 ? u32(b, s + 8) - 1 : -1;
  }
  const keyframes: IndexedKeyframe[] = [];
  let dts = 0;
  let bytes = 0;
  let run = 0;
  let runLeft = runs > 0 ? u32(b, t + 8) : 0;
  let ctRun = 0;
  let ctLeft = ctRuns > 0 ? u32(b, ct + 8) : 0;
  let syncIdx = 0;
  let end = 0;
  for (let i = 0; i < n; i++) {
    while (runLeft === 0 && run + 1 < runs) runLeft = u32(b, t + 8 + 8 * ++run);
    if (runLeft === 0) return no('stts covers fewer samples than stsz');
    const delta = u32(b, t + 12 + 8 * run);
    runLeft--;
    let offset = 0;
    if (ctts) {
      while (ctLeft === 0 && ctRun + 1 < ctRuns) ctLeft = u32(b, ct + 8 + 8 * ++ctRun);
      if (ctLeft > 0) {
        offset = i32(b, ct + 12 + 8 * ctRun);
        ctLeft--;
      }
    }
    const pts = (dts + offset - shift) / scale + delay;
    const isKey = stss ? i === syncAt : true;
    if (isKey) {
      keyframes.push({ time: pts, bytesBefore: bytes });
      if (stss) {
        syncIdx++;
        const next = syncIdx < syncLeft ? u32(b, s + 8 + 4 * syncIdx) - 1 : -1;
        if (next !== -1 && next <= syncAt) return no('stss is not ascending');
        syncAt = next;
      }
    }
    end = Math.max(end, pts + delta / scale);
    bytes += sizeOf(i);
    dts += delta;
  }
  if (bytes > fileSize) return no(`the tables claim ${bytes} bytes of video in a ${fileSize}-byte file`);
  keyframes.sort((a, c) => a.time - c.time);
  return { ok: true, index: { keyframes, totalBytes: bytes, durationSeconds: end, firstDts: -shift / scale + delay } };
}
