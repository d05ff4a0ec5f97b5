import type { Middleware } from 'koa';
import { badRequest, tooLarge } from '../errors';

/** JSON bodies up to `limit` bytes; 413 past it (counted as it streams), 400 for bad JSON. */
export function jsonBody(limit: number): Middleware {
  return async (ctx, next) => {
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.method) || ctx.path.startsWith('/storage/upload/')) return next();
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > limit) throw tooLarge(`Request body exceeds ${limit} bytes`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req) {
      size += (chunk as Buffer).length;
      if (size > limit) throw tooLarge(`Request body exceeds ${limit} bytes`);
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8').trim();
    if (!text) {
      ctx.state.body = {};
    } else {
      const type = ctx.get('content-type');
      if (type && !/json/i.test(type)) throw badRequest('unsupported_content_type', 'Request bodies must be JSON (Content-Type: application/json)');
      try {
        ctx.state.body = JSON.parse(text);
      } catch {
        throw badRequest('invalid_json', 'The request body is not valid JSON');
      }
    }
    return next();
  };
}
