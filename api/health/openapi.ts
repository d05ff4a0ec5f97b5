import { type DocContext, operation } from '../openapi/operation';
import { health, readiness } from './schema';

export function healthDocs(d: DocContext): void {
  const base = [d.config.publicBaseUrl];
  operation(d, { method: 'get', path: '/healthz', operationId: 'healthz', tag: 'Operations', auth: false, servers: base, summary: 'Liveness', responses: { 200: health } });
  operation(d, {
    method: 'get', path: '/readyz', operationId: 'readyz', tag: 'Operations', auth: false, servers: base,
    summary: 'Readiness: Postgres, Temporal and storage answer',
    responses: { 200: readiness, 503: { description: 'A dependency is down', content: { 'application/json': { schema: readiness } } } },
  });
}
