import { type DocContext, operation } from '../openapi/operation';
import { videoIdParam } from '../openapi/common';
import { listQuery } from './list';
import { patchBody } from './manage';
import { videoList, videoRead } from './schema';

export function videoDocs(d: DocContext): void {
  const tag = 'Videos';
  operation(d, {
    method: 'get', path: '/videos', operationId: 'listVideos', tag, summary: 'List videos (keyset pages, filters)',
    query: listQuery, responses: { 200: videoList }, errors: [400],
  });
  operation(d, {
    method: 'get', path: '/videos/{id}', operationId: 'getVideo', tag, summary: 'Read a video (live progress while processing)',
    params: videoIdParam, responses: { 200: videoRead }, errors: [404],
  });
  operation(d, {
    method: 'patch', path: '/videos/{id}', operationId: 'updateVideo', tag, summary: 'Change title, description, visibility, folder or tags',
    params: videoIdParam, body: patchBody, responses: { 200: videoRead }, errors: [403, 404],
  });
  operation(d, {
    method: 'delete', path: '/videos/{id}', operationId: 'deleteVideo', tag, summary: 'Delete a video (files are removed durably)',
    params: videoIdParam, responses: { 204: { description: 'Deleted' } }, errors: [403, 404, 503],
  });
  operation(d, {
    method: 'post', path: '/videos/{id}/retry', operationId: 'retryVideo', tag, summary: 'Process a failed video again',
    params: videoIdParam, responses: { 202: videoRead }, errors: [400, 403, 404],
  });
}
