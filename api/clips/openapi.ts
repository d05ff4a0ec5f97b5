import { videoIdParam } from '../openapi/common';
import { type DocContext, operation } from '../openapi/operation';
import { videoRead } from '../videos/schema';
import { clipBody } from './routes';

/** Clips (SPEC §14, docs/outputs.md): a new video cut from a ready one. */
export function clipDocs(d: DocContext): void {
  operation(d, {
    method: 'post', path: '/videos/{id}/clips', operationId: 'createClip', tag: 'Videos',
    summary: 'Cut a clip: a new video from a range of a ready one',
    description: '202 with the new video (processing, `source_video_id` set). 400 `invalid_range` for times outside the video or less than 0.1 s apart; 409 `not_ready` (source not ready), `original_missing`; 429 `too_many_jobs` with Retry-After (clips being made count against the source video\'s and the workspace\'s jobs in flight).',
    params: videoIdParam, body: clipBody, responses: { 202: videoRead }, errors: [400, 404, 409],
  });
}
