import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';
import {
  createRestrictionBody,
  listRestrictionsQuery,
  patchPlaybackDefaultsBody,
  patchRestrictionBody,
  playbackDefaults,
  restriction,
  restrictionList,
} from './schema';

export function restrictionDocs(d: DocContext): void {
  const tag = 'Playback restrictions';
  const params = z.object({ id: z.string().meta({ example: 'pr_…' }) });
  operation(d, {
    method: 'get', path: '/playback-restrictions', operationId: 'listPlaybackRestrictions', tag, summary: 'List playback restrictions (oldest first)',
    query: listRestrictionsQuery, responses: { 200: restrictionList }, errors: [400],
  });
  operation(d, {
    method: 'post', path: '/playback-restrictions', operationId: 'createPlaybackRestriction', tag,
    summary: 'Create a referrer allow-list (SPEC §20); refused viewers get 403 `playback_restricted`',
    body: createRestrictionBody, responses: { 201: restriction }, errors: [400, 403],
  });
  operation(d, { method: 'get', path: '/playback-restrictions/{id}', operationId: 'getPlaybackRestriction', tag, summary: 'Read a playback restriction', params, responses: { 200: restriction }, errors: [404] });
  operation(d, {
    method: 'patch', path: '/playback-restrictions/{id}', operationId: 'updatePlaybackRestriction', tag, summary: 'Change a playback restriction (in force within a second everywhere)',
    params, body: patchRestrictionBody, responses: { 200: restriction }, errors: [400, 403, 404],
  });
  operation(d, {
    method: 'delete', path: '/playback-restrictions/{id}', operationId: 'deletePlaybackRestriction', tag, summary: 'Delete a playback restriction; videos that named it play unrestricted',
    params, responses: { 204: { description: 'Deleted' } }, errors: [403, 404],
  });
  operation(d, { method: 'get', path: '/playback-defaults', operationId: 'getPlaybackDefaults', tag, summary: "The workspace's default restriction and encryption", responses: { 200: playbackDefaults }, errors: [] });
  operation(d, {
    method: 'patch', path: '/playback-defaults', operationId: 'updatePlaybackDefaults', tag,
    summary: "Set the workspace's default restriction (videos naming none) and encryption (new videos only)",
    body: patchPlaybackDefaultsBody, responses: { 200: playbackDefaults }, errors: [400, 403],
  });
}
