import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';
import { playback, playbackQuery } from './schema';

export function playbackDocs(d: DocContext): void {
  operation(d, {
    method: 'get', path: '/playback/{id}', operationId: 'getPlayback', tag: 'Playback',
    summary: 'Signed playback URLs for any visibility (409 `not_ready` until ready); for a live stream (`ls_…`), of its broadcast on air (409 `not_live` otherwise)',
    params: z.object({ id: z.string().meta({ description: 'A video id (`vid_…` or the UUID), or a live stream id (`ls_…`): the token then names the broadcast going on (its recording) and `hls_url` is its live playlist', example: 'vid_0193a1b2c3d4e5f60718293a4b5c6d7e' }) }), query: playbackQuery, responses: { 200: playback }, errors: [400, 404, 409],
  });
}
