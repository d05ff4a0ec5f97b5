import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';
import { createTagBody, tag, tagList } from './schema';

export function tagDocs(d: DocContext): void {
  const t = 'Tags';
  operation(d, { method: 'get', path: '/tags', operationId: 'listTags', tag: t, summary: 'List tags', responses: { 200: tagList } });
  operation(d, {
    method: 'post', path: '/tags', operationId: 'createTag', tag: t, summary: 'Create a tag (200 with the existing one when the name exists)',
    body: createTagBody, responses: { 200: tag, 201: tag }, errors: [403],
  });
  operation(d, {
    method: 'delete', path: '/tags/{id}', operationId: 'deleteTag', tag: t, summary: 'Delete a tag (removed from every video)',
    params: z.object({ id: z.string().meta({ example: 'tag_…' }) }), responses: { 204: { description: 'Deleted' } }, errors: [403, 404],
  });
}
