import { z } from 'zod';
import { videoIdParam } from '../openapi/common';
import { type DocContext, operation } from '../openapi/operation';
import { captionTrack } from '../videos/schema';
import { captionQuery } from './schema';

/** Caption tracks (SPEC §14, docs/outputs.md). */
export function captionDocs(d: DocContext): void {
  const tag = 'Videos';
  const params = videoIdParam.extend({ language: z.string().meta({ description: 'BCP-47 tag (`en`, `pt-BR`); anything else → 400 `invalid_language`', example: 'en' }) });
  operation(d, {
    method: 'get', path: '/videos/{id}/captions', operationId: 'listCaptions', tag, summary: 'List a video\'s caption tracks',
    params: videoIdParam, responses: { 200: z.object({ data: z.array(captionTrack) }).meta({ id: 'CaptionList' }) }, errors: [404],
  });
  const text = z.string();
  operation(d, {
    method: 'put', path: '/videos/{id}/captions/{language}', operationId: 'putCaptions', tag,
    summary: 'Add or replace a caption track (WebVTT or SRT)',
    description: [
      'The file is validated and stored as WebVTT; the master playlist gains a SUBTITLES group. 201 for a new track, 200 for a replaced one.',
      '400 `invalid_captions` (with `details: {line, message}`), `invalid_language`, `invalid_state` (failed video); 415 `unsupported_content_type` for other media types.',
    ].join('\n'),
    params, query: captionQuery,
    rawBody: { 'text/vtt': text, 'application/x-subrip': text, 'text/srt': text },
    responses: { 200: captionTrack.extend({ cues: z.number().int() }), 201: captionTrack.extend({ cues: z.number().int().meta({ description: 'How many cues the file has' }) }) },
    errors: [400, 404, 415],
  });
  operation(d, {
    method: 'delete', path: '/videos/{id}/captions/{language}', operationId: 'deleteCaptions', tag,
    summary: 'Remove a caption track (the master playlist stops naming it first)',
    params, responses: { 204: { description: 'Deleted' } }, errors: [400, 404],
  });
}
