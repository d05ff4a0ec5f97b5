import type Router from '@koa/router';
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { deliveryWorkflowId } from '../../activities/events';
import { parseId } from '../../lib/ids';
import { TIMED_OUT, within } from '../../lib/timeout';
import { webhookDeliveryWorkflow } from '../../workflows/delivery';
import { fairness, Priority, priority } from '../../workflows/priority';
import type { Deps } from '../deps';
import { badRequest, conflict, notFound } from '../errors';
import { auth, requireOwner } from '../middleware/auth';
import { parseQuery } from '../middleware/validate';
import { deliveries, type DeliveryRow, findEndpoint, serializeDelivery } from './read';
import { deliveriesQuery } from './schema';

async function isRunning(handle: WorkflowHandle): Promise<boolean> {
  try {
    return (await handle.describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

async function closesWithin(handle: WorkflowHandle, ms: number): Promise<boolean> {
  const closed = handle.result().then(
    () => true,
    () => true,
  );
  return (await within(closed, ms)) !== TIMED_OUT;
}

/**
 * Marks an endpoint's pending deliveries cancelled and stops their runs, so a disabled or deleted
 * endpoint hears nothing more. A request already in flight finishes, but cannot revive the
 * delivery: the activity only writes rows that are still pending.
 */
export async function cancelPendingDeliveries(deps: Deps, endpointId: string): Promise<void> {
  const rows: Array<{ id: string }> = await deps
    .db('webhook_deliveries')
    .where({ endpoint_id: endpointId, status: 'pending' })
    .update({ status: 'cancelled', next_attempt_at: null, updated_at: new Date() })
    .returning('id');
  // A run that has already closed refuses the cancel; that is fine.
  await Promise.allSettled(rows.map(({ id }) => deps.temporal.workflow.getHandle(deliveryWorkflowId(id)).cancel()));
}

export function deliveryRoutes(r: Router, deps: Deps): void {
  r.get('/webhooks/:id/deliveries', async (ctx) => {
    const endpoint = await findEndpoint(ctx, deps, ctx.params.id);
    const { limit, cursor } = parseQuery(ctx, deliveriesQuery);
    // dlv_ ids are UUIDv7, so id order is creation order and the id is the keyset cursor.
    const q = deliveries(deps).where('d.endpoint_id', endpoint.id).orderBy('d.id', 'desc').limit(limit + 1);
    if (cursor !== undefined) {
      const after = parseId('dlv', cursor);
      if (!after) throw badRequest('invalid_cursor', 'cursor is not a cursor returned by this endpoint');
      q.where('d.id', '<', after);
    }
    const rows: DeliveryRow[] = await q;
    const page = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    ctx.body = { data: page.map(serializeDelivery), has_more: hasMore, next_cursor: hasMore ? page[page.length - 1].id : null };
  });

  r.post('/webhooks/:id/deliveries/:delivery_id/retry', async (ctx) => {
    requireOwner(ctx);
    const endpoint = await findEndpoint(ctx, deps, ctx.params.id);
    const deliveryId = parseId('dlv', ctx.params.delivery_id);
    const row: DeliveryRow | undefined = deliveryId
      ? await deliveries(deps).where({ 'd.id': deliveryId, 'd.endpoint_id': endpoint.id }).first()
      : undefined;
    if (!row) throw notFound('Delivery');
    if (!endpoint.enabled) throw conflict('endpoint_disabled', 'The endpoint is disabled; enable it (PATCH enabled: true) before retrying');
    const workflowId = deliveryWorkflowId(row.id);
    const inProgress = () => conflict('delivery_in_progress', 'This delivery is still being attempted');
    const handle = deps.temporal.workflow.getHandle(workflowId);
    if (await isRunning(handle)) {
      // The last attempt writes the final status just before its run closes: a client that read
      // `failed` and retried at once would otherwise get a 409 for a run that is all but over.
      if (row.status === 'pending' || !(await closesWithin(handle, 5000))) throw inProgress();
    }

    const now = new Date();
    await deps.db('webhook_deliveries').where({ id: row.id }).update({ status: 'pending', next_attempt_at: now, updated_at: now });
    try {
      await deps.temporal.workflow.start(webhookDeliveryWorkflow, {
        taskQueue: deps.config.temporal.taskQueue,
        workflowId,
        // The earlier run has closed (checked above); its id is reused for the new run.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        priority: priority(Priority.normal, fairness(auth(ctx).workspaceId, auth(ctx).plan)),
        args: [{ deliveryId: row.id, scheduleMs: [...deps.config.webhooks.retryScheduleMs], firstAttempt: row.attempts + 1, attemptTimeoutMs: deps.config.webhooks.timeoutMs }],
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw inProgress();
      throw err;
    }
    ctx.status = 202;
    ctx.body = serializeDelivery({ ...row, status: 'pending', next_attempt_at: now, updated_at: now });
  });
}
