import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { workspaceFairness } from '../lib/fairness';
import { newId } from '../lib/ids';
import { loadOutputs } from '../lib/outputs/read';
import { loadRelations, loadVideoRow, serializeVideo } from '../lib/videos/read';
import type { DeliveryWorkflowInput } from '../lib/webhooks/deliveryTypes';
import { type Fairness, Priority, priority } from '../workflows/priority';
import type { ActivityDeps } from './deps';

export interface EmitEventInput {
  eventId: string;
  videoId: string;
  workspaceId: string;
  type: string;
  error?: { code: string; message: string };
  /** video.captions.* (issue 37): the payload names the track as `data.caption_track` (its read shape). */
  captions?: { language: string };
}

export const deliveryWorkflowId = (deliveryId: string) => `delivery-${deliveryId}`;

/** Starts one delivery workflow per endpoint subscribed to `type` (events of videos and live streams alike). */
export async function fanOutEvent({ config, db, temporal }: Pick<ActivityDeps, 'config' | 'db' | 'temporal'>, workspaceId: string, type: string, eventId: string): Promise<{ deliveries: number }> {
  const endpoints: Array<{ id: string }> = await db('webhook_endpoints')
    .where({ workspace_id: workspaceId, enabled: true })
    .whereNull('deleted_at')
    .andWhere((q) => q.whereNull('events').orWhereRaw('? = any(events)', [type]))
    .select('id');
  let fair: Fairness | undefined;
  for (const ep of endpoints) {
    await db('webhook_deliveries')
      .insert({ id: newId('dlv'), endpoint_id: ep.id, event_id: eventId, status: 'pending' })
      .onConflict(['endpoint_id', 'event_id'])
      .ignore();
    const delivery = await db('webhook_deliveries').where({ endpoint_id: ep.id, event_id: eventId }).first('id');
    fair ??= await workspaceFairness(db, workspaceId);
    try {
      await temporal.workflow.start('webhookDeliveryWorkflow', {
        taskQueue: config.temporal.taskQueue,
        workflowId: deliveryWorkflowId(delivery.id),
        // A retried emitEvent must not send again what a finished run delivered.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        // SPEC §25: nobody waits on a delivery in particular; among workspaces, fair.
        priority: priority(Priority.normal, fair),
        args: [{ deliveryId: delivery.id, scheduleMs: [...config.webhooks.retryScheduleMs], attemptTimeoutMs: config.webhooks.timeoutMs } satisfies DeliveryWorkflowInput],
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  return { deliveries: endpoints.length };
}

/**
 * Records an event and starts one delivery workflow per subscribed endpoint. The video's workflow
 * only waits for this bookkeeping, never for a receiver (SPEC §9).
 */
export function eventActivities({ config, db, temporal }: ActivityDeps) {
  return {
    async emitEvent(p: EmitEventInput): Promise<{ deliveries: number }> {
      let event = await db('events').where({ id: p.eventId }).first();
      if (!event) {
        const row = await loadVideoRow(db, p.videoId, p.workspaceId, { includeDeleted: true });
        if (!row) return { deliveries: 0 };
        const [{ renditions, tags }, outputs] = await Promise.all([loadRelations(db, [row.id]), loadOutputs(db, [row.id])]);
        const createdAt = new Date().toISOString();
        const video = serializeVideo(config, row, renditions.get(row.id) ?? [], tags.get(row.id) ?? [], undefined, outputs.get(row.id));
        const data: Record<string, unknown> = { video };
        if (p.error) data.error = p.error;
        if (p.captions) data.caption_track = video.captions.find((c) => c.language === p.captions?.language) ?? null;
        const payload = { id: p.eventId, type: p.type, created_at: createdAt, workspace_id: p.workspaceId, data };
        await db('events')
          .insert({ id: p.eventId, workspace_id: p.workspaceId, video_id: p.videoId, type: p.type, payload, created_at: createdAt })
          .onConflict('id')
          .ignore();
        event = await db('events').where({ id: p.eventId }).first();
      }
      return fanOutEvent({ config, db, temporal }, p.workspaceId, p.type, event.id);
    },
  };
}
