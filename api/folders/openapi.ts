import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';
import { createFolderBody, folder, folderList, listFoldersQuery, patchFolderBody } from './schema';

export function folderDocs(d: DocContext): void {
  const tag = 'Folders';
  const params = z.object({ id: z.string().meta({ example: 'fld_…' }) });
  operation(d, { method: 'get', path: '/folders', operationId: 'listFolders', tag, summary: 'List folders', query: listFoldersQuery, responses: { 200: folderList }, errors: [400] });
  operation(d, { method: 'post', path: '/folders', operationId: 'createFolder', tag, summary: 'Create a folder', body: createFolderBody, responses: { 201: folder }, errors: [403] });
  operation(d, { method: 'get', path: '/folders/{id}', operationId: 'getFolder', tag, summary: 'Read a folder', params, responses: { 200: folder }, errors: [404] });
  operation(d, {
    method: 'patch', path: '/folders/{id}', operationId: 'updateFolder', tag, summary: 'Rename or move a folder (`folder_cycle` when into itself)',
    params, body: patchFolderBody, responses: { 200: folder }, errors: [403, 404],
  });
  operation(d, {
    method: 'delete', path: '/folders/{id}', operationId: 'deleteFolder', tag, summary: 'Delete a folder; its videos move to the root',
    params, responses: { 204: { description: 'Deleted' } }, errors: [403, 404],
  });
}
