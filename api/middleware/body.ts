import type { Middleware } from 'koa';
import { MAX_IMAGE_BYTES } from '../../lib/watermarks/image';
import { ApiError, badRequest, tooLarge } from '../errors';
import { assertNoNul } from './validate';

// application/json and any structured-syntax `+json` type (RFC 6839), parameters allowed; not
// every type that merely contains "json" (`text/plain; x=json` is one a cross-site page may send).
const JSON_TYPE = /^\s*application\/(?:[\w.!#$&^-]+\+)?json\s*(;|$)/i;
const TEXT_TYPES = /^\s*(text\/vtt|application\/x-subrip|text\/srt)\s*(;|$)/i;
const CAPTION_PATH = /\/videos\/[^/]+\/captions\/[^/]+$/;
// A transcript to align (issue 37) is plain text, read by its route as sent.
const PLAIN_TYPE = /^\s*text\/plain\s*(;|$)/i;
const ALIGN_PATH = /\/videos\/[^/]+\/captions\/[^/]+\/align$/;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
// A watermark's image (SPEC §24) is the body itself, read as bytes up to its own bound.
const IMAGE_TYPE = /^\s*image\/(png|jpeg)\s*(;|$)/i;
const WATERMARK_PATH = /\/watermarks\/?$/;

async function imageBody(ctx: Parameters<Middleware>[0]): Promise<void> {
  const tooBig = () => new ApiError(413, 'image_too_large', `The image exceeds ${MAX_IMAGE_BYTES} bytes (1 MiB)`);
  if (Number(ctx.get('content-length') || 0) > MAX_IMAGE_BYTES) throw tooBig();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_IMAGE_BYTES) throw tooBig();
    chunks.push(chunk as Buffer);
  }
  ctx.state.image = Buffer.concat(chunks);
  ctx.state.body = {};
}

/** JSON bodies up to `limit` bytes; 413 past it (counted as it streams), 400 for bad JSON. */
export function jsonBody(limit: number): Middleware {
  return async (ctx, next) => {
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) || ctx.path.startsWith('/storage/upload/')) return next();
    if (ctx.method === 'POST' && IMAGE_TYPE.test(ctx.get('content-type')) && WATERMARK_PATH.test(ctx.path)) {
      await imageBody(ctx);
      return next();
    }
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > limit) throw tooLarge(`Request body exceeds ${limit} bytes`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req) {
      size += (chunk as Buffer).length;
      if (size > limit) throw tooLarge(`Request body exceeds ${limit} bytes`);
      chunks.push(chunk as Buffer);
    }
    const raw = Buffer.concat(chunks).toString('utf8');
    const text = raw.trim();
    const type = ctx.get('content-type');
    if (PLAIN_TYPE.test(type) && ALIGN_PATH.test(ctx.path)) {
      try {
        ctx.state.text = strictUtf8.decode(Buffer.concat(chunks));
      } catch {
        throw badRequest('invalid_transcript', 'The transcript is not valid UTF-8');
      }
      ctx.state.body = {};
    } else if (TEXT_TYPES.test(type) && CAPTION_PATH.test(ctx.path)) {
      // Caption files (SPEC §14) are parsed by their route; kept untouched so errors name the right line.
      ctx.state.text = raw;
      ctx.state.body = {};
    } else if (!text) {
      ctx.state.body = {};
    } else {
      if (type && !JSON_TYPE.test(type)) throw badRequest('unsupported_content_type', 'Request bodies must be JSON (Content-Type: application/json)');
      try {
        ctx.state.body = JSON.parse(text);
      } catch {
        throw badRequest('invalid_json', 'The request body is not valid JSON');
      }
      assertNoNul(ctx.state.body, 'The request body');
    }
    return next();
  };
}
