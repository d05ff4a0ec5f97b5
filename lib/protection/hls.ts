import { createCipheriv, createHmac } from 'node:crypto';

/**
 * HLS AES-128 (RFC 8216 §4.3.2.4, §5.2): whole segments, AES-128-CBC with PKCS7 padding. Each
 * segment has its own IV, written in the playlist: the first 16 bytes of HMAC-SHA256(content key,
 * "<rung>/<segment>"). Deterministic (a segment encrypts to the same bytes in every process, so
 * ETags and caches hold) and unpredictable without the key, unlike the spec's default IV (the
 * media sequence number).
 */
export function segmentIv(key: Buffer, rung: string, name: string): Buffer {
  return createHmac('sha256', key).update(`${rung}/${name}`).digest().subarray(0, 16);
}

export function encryptSegment(key: Buffer, iv: Buffer, plain: Buffer): Buffer {
  const c = createCipheriv('aes-128-cbc', key, iv);
  return Buffer.concat([c.update(plain), c.final()]);
}

/** A stored ETag for the encrypted form, so a cache holding the clear bytes never revalidates them as current. */
export const encryptedEtag = (etag: string | undefined) => (etag ? etag.replace(/"$/, '-aes128"') : undefined);

/**
 * A rendition's playlist with an `#EXT-X-KEY` before each segment (its IV) pointing at `keyUrl`.
 * Tags before a segment (EXTINF, discontinuities) stay with it; an EXT-X-MAP above the first key
 * stays in the clear (only media segments are encrypted by the CDN).
 */
export function encryptedMediaPlaylist(text: string, keyUrl: string, key: Buffer, rung: string): string {
  const out: string[] = [];
  let segmentStart = -1;
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (t.startsWith('#EXT-X-KEY')) continue;
    if (t.startsWith('#EXTINF') && segmentStart < 0) segmentStart = out.length;
    if (t && !t.startsWith('#')) {
      const iv = segmentIv(key, rung, t).toString('hex');
      out.splice(segmentStart < 0 ? out.length : segmentStart, 0, `#EXT-X-KEY:METHOD=AES-128,URI="${keyUrl}",IV=0x${iv}`);
      segmentStart = -1;
    }
    out.push(line);
  }
  return out.join('\n');
}

/** The height-or-width short side a rung's name says (`720p` → 720), or null (`source`). */
export function rungShortSide(rung: string): number | null {
  const m = /^([0-9]+)p/.exec(rung);
  return m ? Number(m[1]) : null;
}

/**
 * The multivariant playlist with only the variants whose short side is ≤ `max` (a token's
 * `max_resolution`). The short side comes from RESOLUTION (portrait sources scale by their short
 * side too). Other tags (audio and subtitle groups) are kept. The ladder always has a rung at
 * or below 240p (or the source's own size below that), so every allowed cap still plays.
 */
export function cappedMaster(text: string, max: number): string {
  const lines = text.split('\n');
  type Variant = { inf: number; uri: number; side: number };
  const variants: Variant[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('#EXT-X-STREAM-INF:')) continue;
    const res = /RESOLUTION=(\d+)x(\d+)/.exec(lines[i]);
    let j = i + 1;
    while (j < lines.length && (lines[j].trim() === '' || lines[j].startsWith('#'))) j++;
    variants.push({ inf: i, uri: j, side: res ? Math.min(Number(res[1]), Number(res[2])) : 0 });
  }
  const drop = new Set<number>();
  for (const v of variants) if (v.side > max) drop.add(v.inf).add(v.uri);
  return lines.filter((_, i) => !drop.has(i)).join('\n');
}
