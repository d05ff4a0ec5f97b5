import { z } from 'zod';

export const createKeyBody = z.object({ name: z.string().trim().max(100).default(''), access: z.enum(['read', 'full']) }).strict();

export const apiKey = z
  .object({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    access: z.enum(['read', 'full']),
    prefix: z.string().meta({ description: 'The first characters of the secret, to recognise it' }),
    created_at: z.iso.datetime(),
    last_used_at: z.iso.datetime().nullable(),
    created_by: z.string().nullable().meta({ description: 'The person who made it (a dashboard session, or the maker of the key that made it); null for keys made with the admin CLI. A member may revoke only their own' }),
  })
  .meta({ id: 'ApiKey' });
export const apiKeyList = z.object({ data: z.array(apiKey) }).meta({ id: 'ApiKeyList' });
export const createdApiKey = apiKey
  .extend({ secret: z.string().meta({ description: 'Shown in this answer only', example: 'vhk_…' }) })
  .meta({ id: 'CreatedApiKey' });
