import { z } from 'zod';
import { videoIdParam } from '../openapi/common';
import { type DocContext, operation } from '../openapi/operation';
import { addAudioTrackBody, addedAudioTrack, audioTrackRead } from './schema';

/** Audio tracks (SPEC §19, docs/audio.md). */
export function audioTrackDocs(d: DocContext): void {
  const tag = 'Videos';
  operation(d, {
    method: 'get', path: '/videos/{id}/audio-tracks', operationId: 'listAudioTracks', tag, summary: 'List a video\'s audio renditions',
    params: videoIdParam, responses: { 200: z.object({ data: z.array(audioTrackRead) }).meta({ id: 'AudioTrackList' }) }, errors: [404],
  });
  operation(d, {
    method: 'post', path: '/videos/{id}/audio-tracks', operationId: 'addAudioTrack', tag,
    summary: 'Add an audio track (another language) to a ready video',
    description: [
      'From `url` (fetched in the background, public addresses only), or else through the single-use `upload_url` answered here (PUT the file with `upload_headers`; it is picked up as soon as it lands).',
      'The track is aligned to the video\'s timeline: a longer file is cut at the video\'s end, a shorter one padded with silence. Events `video.audio_track.ready` / `video.audio_track.failed`.',
      '400 `invalid_language`, `url_not_allowed`, `validation_failed`; 409 `not_ready` (video not ready or encoded before audio renditions), `audio_track_exists`; 429 `too_many_jobs` with Retry-After (the video or the workspace has as many jobs in flight as it may).',
    ].join('\n'),
    params: videoIdParam, body: addAudioTrackBody, responses: { 202: addedAudioTrack }, errors: [400, 404, 409],
  });
  operation(d, {
    method: 'delete', path: '/videos/{id}/audio-tracks/{language}', operationId: 'deleteAudioTrack', tag,
    summary: 'Remove every audio rendition of a language (the master stops naming them first); event `video.audio_track.deleted`',
    params: videoIdParam.extend({ language: z.string().meta({ example: 'es' }) }), responses: { 204: { description: 'Deleted' } }, errors: [400, 404, 409],
  });
}
