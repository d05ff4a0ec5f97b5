import type Router from '@koa/router';
import { z } from 'zod';
import { assertPublicUrl, UrlNotAllowedError } from '../../lib/net/guard';
import type { Deps } from '../deps';
import { badRequest, forbidden } from '../errors';
import { auth } from '../middleware/auth';
import { parseBody } from '../middleware/validate';
import { createVideo, metaFields } from './create';
import { ok } from './routes';
import { videoMeta } from './schema';

export const fromUrlBody = z.object({
  workspace_id: z.string().min(1),
  url: z.string().min(1).max(2048),
  ...videoMeta,
});

/** The last path segment of the URL, decoded (`/a/My%20Clip.mp4` → `My Clip.mp4`), or `video`. */
export function filenameFromUrl(url: URL): string {
  const last = url.pathname.split('/').filter(Boolean).pop() ?? '';
  try {
    return decodeURIComponent(last) || 'video';
  } catch {
    return last || 'video';
  }
}

/**
 * Form B URL import (SPEC §4). The address is checked here so that an obviously internal URL is a
 * 400 at once; the import activity checks again on every hop, at connect time.
 */
export function fromUrlRoutes(r: Router, deps: Deps): void {
  r.post('/upload/from-url', async (ctx) => {
    const a = auth(ctx);
    const body = parseBody(ctx, fromUrlBody);
    if (body.workspace_id !== a.workspaceId) throw forbidden('workspace_mismatch', 'workspace_id is not the workspace of this API key');
    let url: URL;
    try {
      url = await assertPublicUrl(body.url, deps.config.allowLoopbackUrls);
    } catch (err) {
      if (err instanceof UrlNotAllowedError) throw badRequest('url_not_allowed', `The URL cannot be imported: ${err.message}`);
      throw err;
    }
    const v = await createVideo(deps, a, {
      filename: filenameFromUrl(url),
      contentType: null,
      size: null,
      ...metaFields(body),
      sourceUrl: url.toString(),
      source: { kind: 'url', url: url.toString() },
    });
    ok(ctx, 202, { video_id: v.id, status: 'processing', message: 'The video is being imported from the URL and will then be processed' });
  });
}
