import { z } from 'zod';
import { videoIdParam } from '../openapi/common';
import { type DocContext, operation } from '../openapi/operation';
import { captionTrack } from '../videos/schema';
import { captionQuery, transcriptBody } from './schema';

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
    method: 'post', path: '/videos/{id}/captions/{language}/align', operationId: 'alignCaptions', tag,
    summary: 'Make a caption track from a plain-text transcript (forced alignment)',
    description: [
      'The transcript (UTF-8, ≤ 200 KB) is timed to the speech by forced alignment (docs/outputs.md "Captions from a transcript"). 202 with the track `aligning`;',
      'it turns `ready` (cues of ≤ 2 lines × 42 characters, ≤ 7 s, split at sentences and clauses) with `video.captions.ready`, or `failed` with `error` and `video.captions.failed`',
      '(`transcript_mismatch`: the words do not match the speech; `transcript_not_in_dictionary`: another language; `no_audio`).',
      'English (`en`, `en-*`) and French (`fr`, `fr-*`) only: others 422 `language_unsupported`. 400 `invalid_transcript` (no words, bad UTF-8), `invalid_request` (NUL);',
      '409 `not_ready`, `alignment_in_progress`; 413 `transcript_too_large`; 415 for other media types; 422 `transcript_too_long` (more words than the audio can hold: 8 a second), `video_too_long`.',
      '429 `too_many_jobs` with Retry-After: the video (every language tag counts) or the workspace has as many jobs in flight as it may (alignments, added audio tracks, clips; `JOBS_PER_VIDEO`, `JOBS_PER_WORKSPACE`).',
    ].join('\n'),
    params, query: captionQuery,
    rawBody: { 'text/plain': text.meta({ description: 'The transcript itself' }), 'application/json': transcriptBody },
    responses: { 202: captionTrack.extend({ words: z.number().int().meta({ description: 'Words the aligner will look for' }) }) },
    errors: [400, 404, 409, 413, 415, 422],
  });
  operation(d, {
    method: 'delete', path: '/videos/{id}/captions/{language}', operationId: 'deleteCaptions', tag,
    summary: 'Remove a caption track (the master playlist stops naming it first)',
    params, responses: { 204: { description: 'Deleted' } }, errors: [400, 404],
  });
}
