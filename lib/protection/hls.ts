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

/** A CMAF rendition (`720p-hevc`, `720p-av1`: lib/media/cmaf.ts): not served for an encrypted video. */
export const isCmafRung = (rung: string): boolean => /-(?:hevc|av1)$/.test(rung);

/** The multivariant playlist without the variants `drop` names (by the variant's tag line and its URI); other tags are kept. */
function withoutVariants(text: string, drop: (v: { side: number; uri: string }) => boolean): string {
  const lines = text.split('\n');
  const gone = new Set<number>();
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].startsWith('#EXT-X-STREAM-INF:')) continue;
    const res = /RESOLUTION=(\d+)x(\d+)/.exec(lines[i]);
    let j = i + 1;
    while (j < lines.length && (lines[j].trim() === '' || lines[j].startsWith('#'))) j++;
    if (drop({ side: res ? Math.min(Number(res[1]), Number(res[2])) : 0, uri: lines[j]?.trim() ?? '' })) gone.add(i).add(j);
  }
  return lines.filter((_, i) => !gone.has(i)).join('\n');
}

/**
 * The multivariant playlist with only the variants whose short side is ≤ `max` (a token's
 * `max_resolution`). The short side comes from RESOLUTION (portrait sources scale by their short
 * side too). Other tags (audio and subtitle groups) are kept. The ladder always has a rung at
 * or below 240p (or the source's own size below that), so every allowed cap still plays.
 */
export const cappedMaster = (text: string, max: number): string => withoutVariants(text, (v) => v.side > max);

/**
 * An encrypted video's multivariant playlist lists the H.264 (MPEG-TS) ladder only: its CMAF
 * renditions are not served encrypted (docs/protection.md, "CMAF renditions").
 */
export const withoutCmafVariants = (text: string): string => withoutVariants(text, (v) => isCmafRung(v.uri.split('/')[0]));
