import type Router from '@koa/router';
import { LocalStorage } from '../../lib/storage';
import type { Deps } from '../deps';
import { notFound } from '../errors';

/** The local driver's upload URLs land here (S3 uploads go straight to the bucket). */
export function storageRoutes(r: Router, deps: Deps): void {
  r.put('/storage/upload/:token', async (ctx) => {
    if (!(deps.storage instanceof LocalStorage)) throw notFound();
    const lengthHeader = ctx.get('content-length');
    const { key, size } = await deps.storage.acceptUpload(
      ctx.params.token,
      ctx.get('content-type') || undefined,
      lengthHeader ? Number(lengthHeader) : undefined,
      ctx.req,
    );
    ctx.status = 200;
    ctx.body = { key, size };
  });
}
