import { type DocContext, operation } from '../openapi/operation';
import { videoIdParam } from '../openapi/common';
import { playback, playbackQuery } from './schema';

export function playbackDocs(d: DocContext): void {
  operation(d, {
    method: 'get', path: '/playback/{id}', operationId: 'getPlayback', tag: 'Playback',
    summary: 'Signed playback URLs for any visibility (409 `not_ready` until ready)',
    params: videoIdParam, query: playbackQuery, responses: { 200: playback }, errors: [400, 404, 409],
  });
}
