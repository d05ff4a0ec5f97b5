import type Router from '@koa/router';
import { newId } from '../../lib/ids';
import { assertPublicUrl, UrlNotAllowedError } from '../../lib/net/guard';
import { sealWebhookSecret } from '../../lib/webhooks/secrets';
import { newWebhookSecret } from '../../lib/webhooks/signature';
import type { Deps } from '../deps';
import { badRequest } from '../errors';
import { auth, requireOwner } from '../middleware/auth';
import { parseBody } from '../middleware/validate';
import { cancelPendingDeliveries, deliveryRoutes } from './deliveries';
import { type EndpointRow, findEndpoint, serializeEndpoint } from './read';
import { createBody, updateBody } from './schema';

/** Endpoint URLs pass the same address checks as URL import (SPEC §9). */
async function checkUrl(deps: Deps, url: string): Promise<string> {
  try {
    await assertPublicUrl(url, deps.config.allowLoopbackUrls);
    return url;
  } catch (err) {
    if (err instanceof UrlNotAllowedError) throw badRequest('url_not_allowed', `url: ${err.message}`);
    throw err;
  }
}

export function webhookRoutes(r: Router, deps: Deps): void {
  const { db } = deps;

  // Reading endpoints is every member's; changing them is an owner's (docs/dashboard.md, "Roles").
  r.post('/webhooks', async (ctx) => {
    requireOwner(ctx);
    const body = parseBody(ctx, createBody);
    const secret = newWebhookSecret();
    const url = await checkUrl(deps, body.url);
    const [row]: EndpointRow[] = await db('webhook_endpoints')
      .insert({
        id: newId('whk'),
        workspace_id: auth(ctx).workspaceId,
        url,
        description: body.description ?? '',
        events: body.events ?? null,
        secret: sealWebhookSecret(deps.config, secret),
      })
      .returning('*');
    ctx.status = 201;
    ctx.body = { ...serializeEndpoint(row), secret };
  });

  r.get('/webhooks', async (ctx) => {
    const rows: EndpointRow[] = await db('webhook_endpoints')
      .where({ workspace_id: auth(ctx).workspaceId })
      .whereNull('deleted_at')
      .orderBy('created_at', 'desc');
    ctx.body = { data: rows.map(serializeEndpoint) };
  });

  r.get('/webhooks/:id', async (ctx) => {
    ctx.body = serializeEndpoint(await findEndpoint(ctx, deps, ctx.params.id));
  });

  r.patch('/webhooks/:id', async (ctx) => {
    requireOwner(ctx);
    const endpoint = await findEndpoint(ctx, deps, ctx.params.id);
    const body = parseBody(ctx, updateBody);
    const patch: Partial<EndpointRow> = { updated_at: new Date() };
    if (body.url !== undefined) patch.url = await checkUrl(deps, body.url);
    if (body.events !== undefined) patch.events = body.events;
    if (body.description !== undefined) patch.description = body.description;
    if (body.enabled === true) Object.assign(patch, { enabled: true, disabled_reason: null });
    if (body.enabled === false && endpoint.enabled) Object.assign(patch, { enabled: false, disabled_reason: 'manual' });
    const secret = body.rotate_secret ? newWebhookSecret() : undefined;
    if (secret) patch.secret = sealWebhookSecret(deps.config, secret);
    const [row]: EndpointRow[] = await db('webhook_endpoints').where({ id: endpoint.id }).update(patch).returning('*');
    if (patch.enabled === false) await cancelPendingDeliveries(deps, endpoint.id);
    ctx.body = secret ? { ...serializeEndpoint(row), secret } : serializeEndpoint(row);
  });

  r.delete('/webhooks/:id', async (ctx) => {
    requireOwner(ctx);
    const endpoint = await findEndpoint(ctx, deps, ctx.params.id);
    // Soft delete: the delivery history stays for support; the API no longer shows either.
    await db('webhook_endpoints').where({ id: endpoint.id }).update({ deleted_at: new Date(), updated_at: new Date() });
    await cancelPendingDeliveries(deps, endpoint.id);
    ctx.status = 204;
  });

  deliveryRoutes(r, deps);
}
