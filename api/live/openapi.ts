import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';
import { createLiveBody, listLiveQuery, liveStream, liveStreamList, patchLiveBody } from './schema';

export function liveDocs(d: DocContext): void {
  const tag = 'Live streams';
  const params = z.object({ id: z.string().meta({ example: 'ls_…' }) });
  operation(d, {
    method: 'post', path: '/live-streams', operationId: 'createLiveStream', tag, summary: 'Create a live stream; the stream key is in this answer only',
    body: createLiveBody, responses: { 201: liveStream }, errors: [400, 403],
  });
  operation(d, { method: 'get', path: '/live-streams', operationId: 'listLiveStreams', tag, summary: 'List live streams, newest first (keyset pages)', query: listLiveQuery, responses: { 200: liveStreamList }, errors: [400] });
  operation(d, { method: 'get', path: '/live-streams/{id}', operationId: 'getLiveStream', tag, summary: 'Read a live stream', params, responses: { 200: liveStream }, errors: [404] });
  operation(d, {
    method: 'patch', path: '/live-streams/{id}', operationId: 'updateLiveStream', tag, summary: 'Change a live stream (applies from the next broadcast)',
    params, body: patchLiveBody, responses: { 200: liveStream }, errors: [400, 403, 404],
  });
  operation(d, {
    method: 'delete', path: '/live-streams/{id}', operationId: 'deleteLiveStream', tag, summary: 'Delete a live stream; a broadcast going on ends (its recording is kept)',
    params, responses: { 204: { description: 'Deleted' } }, errors: [403, 404],
  });
  const action = (path: string, operationId: string, summary: string) =>
    operation(d, { method: 'post', path: `/live-streams/{id}/${path}`, operationId, tag, summary, params, responses: { 200: liveStream }, errors: [403, 404] });
  action('reset-stream-key', 'resetLiveStreamKey', 'A new stream key (in this answer only); an encoder on the old one is dropped');
  action('complete', 'completeLiveStream', 'End the broadcast now and drop the encoder; the recording turns ready');
  action('disable', 'disableLiveStream', 'Refuse encoders (and end a broadcast going on)');
  action('enable', 'enableLiveStream', 'Accept encoders again');
}
