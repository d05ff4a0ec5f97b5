import { z } from 'zod';

const check = z.object({ ok: z.boolean(), error: z.string().optional() });
export const health = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });
export const readiness = z
  .object({ status: z.enum(['ok', 'unavailable']), checks: z.object({ db: check, temporal: check, storage: check }) })
  .meta({ id: 'Readiness' });
