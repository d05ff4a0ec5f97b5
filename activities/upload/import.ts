import { STATUS_CODES } from 'node:http';
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { safeRequest, type SafeResponse } from '../../lib/net/request';
import { UrlNotAllowedError } from '../../lib/net/guard';
import { ErrorCodes } from '../../workflows/video/defs';
import type { ActivityDeps } from '../deps';

const IDLE_TIMEOUT_MS = 30_000;
const MAX_REDIRECTS = 5;
const SNIFF_BYTES = 64;
const HEARTBEAT_EVERY_MS = 1000;

const importFailed = (message: string) => ApplicationFailure.nonRetryable(message, ErrorCodes.importFailed);

/**
 * Why the first bytes are not a video, or null when they may be one. ffmpeg would read many of
 * these formats happily (an HLS playlist even makes it fetch further URLs), so they are refused
 * before anything is stored.
 */
export function sniffNotVideo(head: Buffer): string | null {
  if (head.length === 0) return 'the response body is empty';
  const signatures: Array<[string, Buffer]> = [
    ['a PDF document', Buffer.from('%PDF')],
    ['a PNG image', Buffer.from([0x89, 0x50, 0x4e, 0x47])],
    ['a JPEG image', Buffer.from([0xff, 0xd8, 0xff])],
    ['a GIF image', Buffer.from('GIF8')],
    ['a ZIP archive', Buffer.from([0x50, 0x4b, 0x03, 0x04])],
  ];
  for (const [what, magic] of signatures) if (head.subarray(0, magic.length).equals(magic)) return `it is ${what}`;
  const text = head.toString('latin1').replace(/^\uFEFF|^\xEF\xBB\xBF/, '').trimStart();
  if (/^[<{[]/.test(text)) return 'it is HTML, XML or JSON';
  // Every known video container starts with binary (sizes, magic numbers); all-printable is text.
  if (head.every((b) => b === 0x09 || b === 0x0a || b === 0x0d || (b >= 0x20 && b < 0x7f))) return 'it is text';
  return null;
}

/** Counts bytes, refuses bodies past `max`, and holds back the first bytes until they are sniffed. */
class ImportGate extends Transform {
  bytes = 0;
  private head: Buffer[] = [];
  private headLength = 0;
  private sniffed = false;

  constructor(private readonly max: number) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.max) return cb(importFailed(`The URL returned more than ${this.max} bytes, the size limit`));
    if (this.sniffed) return cb(null, chunk);
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (this.headLength < SNIFF_BYTES) return cb();
    this.release(cb);
  }

  override _flush(cb: TransformCallback): void {
    if (this.sniffed) return cb();
    this.release(cb);
  }

  private release(cb: TransformCallback): void {
    const buffered = Buffer.concat(this.head);
    this.head = [];
    this.sniffed = true;
    const why = sniffNotVideo(buffered.subarray(0, SNIFF_BYTES));
    if (why) return cb(importFailed(`The URL did not return a video: ${why}`));
    cb(null, buffered);
  }
}

function httpFailure(res: SafeResponse): Error {
  const text = `The URL answered ${res.status} ${STATUS_CODES[res.status] ?? ''}`.trim();
  // The server may recover (overload, maintenance): let the activity's retry policy try again.
  if (res.status >= 500 || res.status === 408 || res.status === 429) return ApplicationFailure.retryable(text, 'import_http_error');
  return importFailed(text);
}

export function importActivities({ config, db, storage, log }: ActivityDeps) {
  return {
    /**
     * Downloads a URL into the video's original key, streaming (constant memory), ≤ the upload
     * limit. Every hop's resolved address is checked at connect time (SPEC §4). Refusals and bad
     * answers are final; network errors are retried by the workflow's policy.
     */
    async importFromUrl(p: { videoId: string; workspaceId: string; storageKey: string; url: string }): Promise<{ size: number }> {
      const ctx = Context.current();
      const max = config.upload.maxBytes;
      const gate = new ImportGate(max);
      // Throttled progress; it also keeps a slow server (bounded by the idle timeout) from timing the activity out.
      const beat = setInterval(() => ctx.heartbeat({ bytes: gate.bytes }), HEARTBEAT_EVERY_MS);
      try {
        return await download(p, gate);
      } catch (err) {
        // Report a cancelled import as cancelled, whatever error the aborted socket produced.
        if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
        throw err;
      } finally {
        clearInterval(beat);
      }
    },
  };

  async function download(p: { videoId: string; storageKey: string; url: string }, gate: ImportGate): Promise<{ size: number }> {
    const max = config.upload.maxBytes;
    let res: SafeResponse;
    try {
      res = await safeRequest(p.url, {
        maxRedirects: MAX_REDIRECTS,
        allowLoopback: config.allowLoopbackUrls,
        timeoutMs: IDLE_TIMEOUT_MS,
        signal: Context.current().cancellationSignal,
        headers: { 'user-agent': 'vidhost-import/1', accept: 'video/*, application/octet-stream;q=0.9, */*;q=0.1' },
      });
    } catch (err) {
      if (err instanceof UrlNotAllowedError) throw importFailed(`The URL is not allowed: ${err.message}`);
      throw err;
    }
    if (res.status < 200 || res.status >= 300) {
      res.body.resume();
      throw httpFailure(res);
    }
    const declared = Number(res.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      res.body.destroy();
      throw importFailed(`The URL's content is ${declared} bytes, more than the ${max} byte limit`);
    }
    const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const contentType = type.startsWith('video/') ? type : 'application/octet-stream';
    try {
      // pipeline() carries a dropped connection or an abort from the response into what storage reads.
      await storage.putStream(p.storageKey, pipeline(res.body, gate, () => undefined), { contentType });
    } finally {
      res.body.destroy();
    }
    await db('videos')
      .where({ id: p.videoId })
      .update({ size_bytes: gate.bytes, content_type: type.startsWith('video/') ? type : null, updated_at: db.fn.now() });
    log.info({ videoId: p.videoId, bytes: gate.bytes }, 'imported from URL');
    return { size: gate.bytes };
  }
}
