// What a watermark image is, read from its bytes alone (never from the Content-Type a client
// claims): PNG or baseline/progressive JPEG, its size, and the refusals of SPEC §24. A PNG's
// compressed data is inflated under a bound, so a decompression bomb (a small file that would
// inflate past what its declared size can hold) is refused before any decoder sees it.
import zlib from 'node:zlib';

export const MAX_IMAGE_BYTES = 1024 * 1024;
export const MAX_IMAGE_SIDE = 4096;

export type ImageFacts = { format: 'png' | 'jpeg'; contentType: 'image/png' | 'image/jpeg'; width: number; height: number };

/** A refusal with a stable code (docs/watermarks.md); the API answers it as `status`. */
export class WatermarkImageError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const refuse = (status: number, code: string, message: string) => new WatermarkImageError(status, code, message);
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
// Channels per PNG colour type (grey, -, RGB, palette, grey+alpha, -, RGBA).
const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

function checkSide(width: number, height: number): void {
  if (!(width > 0 && height > 0)) throw refuse(400, 'invalid_image', 'The image declares no width or height');
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE) {
    throw refuse(400, 'image_dimensions_too_large', `The image is ${width}×${height}; at most ${MAX_IMAGE_SIDE}×${MAX_IMAGE_SIDE} is accepted`);
  }
}

function inspectPng(buf: Buffer): ImageFacts {
  let at = 8;
  let header: { width: number; height: number; depth: number; type: number } | null = null;
  const idat: Buffer[] = [];
  let ended = false;
  while (at + 8 <= buf.length) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + length);
    if (data.length !== length || at + 12 + length > buf.length) throw refuse(400, 'invalid_image', 'The PNG is truncated');
    if (type === 'IHDR') {
      if (length < 13) throw refuse(400, 'invalid_image', 'The PNG header is malformed');
      header = { width: data.readUInt32BE(0), height: data.readUInt32BE(4), depth: data[8], type: data[9] };
    } else if (type === 'acTL') {
      throw refuse(400, 'image_animated', 'Animated PNGs (APNG) cannot be a watermark; send a still image');
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') {
      ended = true;
      break;
    }
    at += 12 + length;
  }
  if (!header || !ended || idat.length === 0) throw refuse(400, 'invalid_image', 'The PNG is incomplete (no header, image data or end)');
  const channels = PNG_CHANNELS[header.type];
  if (!channels || ![1, 2, 4, 8, 16].includes(header.depth)) throw refuse(400, 'invalid_image', 'The PNG has an unknown colour type or depth');
  checkSide(header.width, header.height);
  // Filter byte + packed samples per row: the most a valid PNG of this size can inflate to (Adam7 adds under 1%).
  const rowBytes = 1 + Math.ceil((header.width * channels * header.depth) / 8);
  const bound = Math.ceil(rowBytes * header.height * 1.02) + 64;
  try {
    zlib.inflateSync(Buffer.concat(idat), { maxOutputLength: bound });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || /Cannot create a Buffer larger|buffer too large/i.test(String(err))) {
      throw refuse(400, 'image_decompression_bomb', `The PNG's data inflates past what ${header.width}×${header.height} can hold`);
    }
    throw refuse(400, 'invalid_image', 'The PNG image data does not decompress');
  }
  return { format: 'png', contentType: 'image/png', width: header.width, height: header.height };
}

// Start-of-frame markers: SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function inspectJpeg(buf: Buffer): ImageFacts {
  let at = 2;
  while (at + 4 <= buf.length) {
    if (buf[at] !== 0xff) throw refuse(400, 'invalid_image', 'The JPEG is malformed');
    const marker = buf[at + 1];
    if (marker === 0xff) {
      at++;
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) break; // end of image, start of scan: no frame header before it
    const length = buf.readUInt16BE(at + 2);
    if (length < 2 || at + 2 + length > buf.length) throw refuse(400, 'invalid_image', 'The JPEG is truncated');
    if (SOF.has(marker)) {
      if (length < 8) throw refuse(400, 'invalid_image', 'The JPEG frame header is malformed');
      const height = buf.readUInt16BE(at + 5);
      const width = buf.readUInt16BE(at + 7);
      const components = buf[at + 9];
      // 4 components is CMYK (or Adobe YCCK): ffmpeg and browsers disagree on its colours.
      if (components === 4) throw refuse(400, 'image_cmyk', 'CMYK JPEGs cannot be a watermark; save it as RGB');
      if (components !== 1 && components !== 3) throw refuse(400, 'invalid_image', `The JPEG has ${components} colour components`);
      checkSide(width, height);
      if (buf.indexOf(Buffer.from([0xff, 0xd9]), at) < 0) throw refuse(400, 'invalid_image', 'The JPEG is truncated (no end of image)');
      return { format: 'jpeg', contentType: 'image/jpeg', width, height };
    }
    at += 2 + length;
  }
  throw refuse(400, 'invalid_image', 'The JPEG has no frame header');
}

/** The facts of a watermark image, or a WatermarkImageError saying why it is refused. */
export function inspectImage(buf: Buffer): ImageFacts {
  if (buf.length > MAX_IMAGE_BYTES) throw refuse(413, 'image_too_large', `The image is ${buf.length} bytes; at most ${MAX_IMAGE_BYTES} (1 MiB) is accepted`);
  if (buf.length >= 8 && buf.subarray(0, 8).equals(PNG_SIGNATURE)) return inspectPng(buf);
  if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return inspectJpeg(buf);
  if (buf.length >= 6 && /^GIF8[79]a$/.test(buf.toString('latin1', 0, 6))) {
    throw refuse(415, 'unsupported_image_type', 'GIF cannot be a watermark; send a PNG or JPEG');
  }
  throw refuse(415, 'unsupported_image_type', 'The body is not a PNG or JPEG image');
}
