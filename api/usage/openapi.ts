import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';

const month = z.string().meta({ example: '2026-11' });
export const usage = z
  .object({
    workspace_id: z.string(),
    plan: z.string(),
    storage: z.object({ used_bytes: z.number().int(), limit_bytes: z.number().int(), videos: z.number().int() }),
    bandwidth: z.object({ month, used_bytes: z.number().int(), limit_bytes: z.number().int().nullable().meta({ description: 'null: no monthly allowance' }) }),
    bandwidth_history: z.array(z.object({ month, bytes: z.number().int() })),
  })
  .meta({ id: 'Usage' });

export function usageDocs(d: DocContext): void {
  operation(d, {
    method: 'get', path: '/usage', operationId: 'getUsage', tag: 'Usage',
    summary: 'Storage and this month\'s bandwidth against the plan, and the last six months\' bandwidth',
    responses: { 200: usage },
  });
}
