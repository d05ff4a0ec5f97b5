import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';
import { apiKeyList, createKeyBody, createdApiKey } from './schema';

export function keyDocs(d: DocContext): void {
  const tag = 'API keys';
  operation(d, { method: 'get', path: '/api-keys', operationId: 'listApiKeys', tag, summary: 'List live keys (full access only)', responses: { 200: apiKeyList }, errors: [403] });
  operation(d, {
    method: 'post', path: '/api-keys', operationId: 'createApiKey', tag, summary: 'Create a key; the secret is in this answer only',
    body: createKeyBody, responses: { 201: createdApiKey }, errors: [403],
  });
  operation(d, {
    method: 'delete', path: '/api-keys/{id}', operationId: 'revokeApiKey', tag, summary: 'Revoke a key (never the last full-access key: 409 `last_full_key`)',
    params: z.object({ id: z.string().meta({ example: 'key_…' }) }), responses: { 204: { description: 'Revoked' } }, errors: [403, 404, 409],
  });
}
