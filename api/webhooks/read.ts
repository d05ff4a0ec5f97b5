import type { ParameterizedContext } from 'koa';
import { parseId } from '../../lib/ids';
import type { Deps } from '../deps';
import { notFound } from '../errors';
import { auth } from '../middleware/auth';

export interface EndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  description: string;
  events: string[] | null;
  secret: string;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  last_response_body: string | null;
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** The endpoint as every read shows it: never with its secret (that is shown on create and rotate only). */
export function serializeEndpoint(row: EndpointRow) {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function serializeDelivery(row: DeliveryRow) {
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    last_response_body: row.last_response_body,
    next_attempt_at: iso(row.next_attempt_at),
    delivered_at: iso(row.delivered_at),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** The caller's live endpoint; 404 for malformed ids, deleted endpoints and other workspaces' alike. */
export async function findEndpoint(ctx: ParameterizedContext, deps: Deps, id: string): Promise<EndpointRow> {
  const endpointId = parseId('whk', id);
  if (!endpointId) throw notFound('Webhook endpoint');
  const row = await deps.db<EndpointRow>('webhook_endpoints')
    .where({ id: endpointId, workspace_id: auth(ctx).workspaceId })
    .whereNull('deleted_at')
    .first();
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

/** Deliveries joined with their event's type. */
export const deliveries = (deps: Deps) =>
  deps.db('webhook_deliveries as d').join('events as e', 'e.id', 'd.event_id').select('d.*', 'e.type as event_type');
