// Pure: a name for what a refused file looks like, from its first bytes, so the user's error says
// "an HLS playlist" rather than only "not on the allow-list".

const text = (head: Buffer): string => head.toString('latin1').replace(/^\xEF\xBB\xBF/, '').trimStart();

const isPrintable = (head: Buffer): boolean => head.every((b) => b === 0x09 || b === 0x0a || b === 0x0d || (b >= 0x20 && b < 0x7f) || b >= 0xa0);

const IMAGES: Array<[string, number[]]> = [
  ['PNG', [0x89, 0x50, 0x4e, 0x47]],
  ['JPEG', [0xff, 0xd8, 0xff]],
  ['GIF', [0x47, 0x49, 0x46, 0x38]],
  ['BMP', [0x42, 0x4d]],
];

/** What the head of a file looks like when it is not a video container, or null. */
export function describeHead(head: Buffer): string | null {
  if (head.length === 0) return 'an empty file';
  const t = text(head);
  if (/^#EXTM3U/i.test(t)) return 'an HLS playlist';
  if (/^ffconcat/i.test(t) || /^(file|duration|inpoint)\s+\S/m.test(t)) return 'a concat list';
  if (/^<\?xml|^<MPD/i.test(t)) return /<MPD/i.test(t) ? 'a DASH manifest' : 'an XML document';
  if (/^\[playlist\]|^<asx|^<smil/i.test(t)) return 'a playlist';
  for (const [name, magic] of IMAGES) if (head.subarray(0, magic.length).equals(Buffer.from(magic))) return `a still image (${name})`;
  if (isPrintable(head.subarray(0, 512))) return 'a text file';
  return null;
}
