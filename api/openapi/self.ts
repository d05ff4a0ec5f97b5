import { z } from 'zod';
import { type DocContext, operation } from './operation';

/** The document and its reference page: key-less, on the base URL. (Metrics have their own port: docs/operations.md.) */
export function selfDocs(d: DocContext): void {
  const common = { tag: 'Operations', auth: false, servers: [d.config.publicBaseUrl] } as const;
  operation(d, {
    ...common, method: 'get', path: '/openapi.json', operationId: 'openapiDocument', summary: 'This document (OpenAPI 3.1)',
    responses: { 200: z.record(z.string(), z.unknown()) },
  });
  operation(d, {
    ...common, method: 'get', path: '/docs', operationId: 'apiReference', summary: 'The API reference page (served from the project\'s own dependencies)',
    responses: { 200: { description: 'HTML', content: { 'text/html': { schema: z.string() } } } },
  });
  operation(d, {
    ...common, method: 'get', path: '/docs/assets/{name}', operationId: 'apiReferenceAsset', summary: 'Scripts and styles of the reference page',
    params: z.object({ name: z.string() }),
    responses: {
      200: { description: 'The asset', content: { 'application/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } } },
    },
    errors: [404],
  });
}
