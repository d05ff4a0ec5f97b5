// A watermark image named by URL (SPEC §24): fetched once, under the URL-import guard (public
// addresses only, on every hop), and never more than the image bound is read.
import { safeRequest } from '../net/request';
import { MAX_IMAGE_BYTES, WatermarkImageError } from './image';

const TIMEOUT_MS = 15_000;
const MAX_REDIRECTS = 3;

/** The body at `url`; WatermarkImageError for a failed fetch or a body past 1 MiB, UrlNotAllowedError for a refused address. */
export async function fetchImage(url: string, o: { allowLoopback: boolean; signal?: AbortSignal }): Promise<Buffer> {
  const res = await safeRequest(url, { maxRedirects: MAX_REDIRECTS, allowLoopback: o.allowLoopback, timeoutMs: TIMEOUT_MS, signal: o.signal, headers: { 'user-agent': 'vidhost-watermark/1', accept: 'image/png, image/jpeg' } });
  if (res.status < 200 || res.status >= 300) {
    res.body.resume();
    throw new WatermarkImageError(400, 'url_fetch_failed', `The URL answered HTTP ${res.status}`);
  }
  const tooBig = () => new WatermarkImageError(413, 'image_too_large', `The image at the URL exceeds ${MAX_IMAGE_BYTES} bytes (1 MiB)`);
  if (Number(res.headers['content-length']) > MAX_IMAGE_BYTES) {
    res.body.destroy();
    throw tooBig();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > MAX_IMAGE_BYTES) {
      res.body.destroy();
      throw tooBig();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
