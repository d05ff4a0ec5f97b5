import { z } from 'zod';
import { envelope } from '../openapi/common';
import { type DocContext, operation } from '../openapi/operation';
import { fromUrlBody } from './fromUrl';
import {
  completeBody,
  completeResponse,
  confirmData,
  fromUrlData,
  initBody,
  initResponse,
  presignedBody,
  presignedData,
} from './schema';

export function uploadDocs(d: DocContext): void {
  const max = d.config.upload.maxBytes;
  const resumable = d.config.upload.maxResumableBytes;
  const tag = 'Uploads';
  operation(d, {
    method: 'post', path: '/upload/init', operationId: 'initUpload', tag,
    summary: 'Create a video and get a URL to PUT its file to (Form A/C)',
    body: initBody(max, resumable), responses: { 201: initResponse }, errors: [403, 404],
  });
  operation(d, {
    method: 'post', path: '/upload/complete', operationId: 'completeUpload', tag,
    summary: 'Start processing once the file is uploaded (idempotent)',
    description: '202 when this call started processing; 200 with the current status when it was already processing or ready. 400 `upload_missing` / `upload_size_mismatch` when the object is absent or of another size.',
    body: completeBody, responses: { 200: completeResponse, 202: completeResponse }, errors: [404],
  });
  operation(d, {
    method: 'post', path: '/upload/presigned', operationId: 'presignedUpload', tag, envelope: true,
    summary: 'Create a video and get a presigned upload URL (Form B envelope)',
    body: presignedBody(max, resumable), responses: { 201: envelope(presignedData) }, errors: [403, 404],
  });
  operation(d, {
    method: 'post', path: '/upload/confirm/{video_id}', operationId: 'confirmUpload', tag, envelope: true,
    summary: 'Complete the upload and wait (bounded) until it plays (Form B envelope)',
    params: z.object({ video_id: z.string().meta({ description: 'The UUID (or `vid_…`)' }) }),
    responses: { 200: envelope(confirmData) }, errors: [400, 404],
  });
  operation(d, {
    method: 'post', path: '/upload/from-url', operationId: 'importFromUrl', tag, envelope: true,
    summary: 'Import a video from an http(s) URL (Form B envelope)',
    description: 'Targets that resolve to loopback, private, link-local, multicast or metadata addresses → 400 `url_not_allowed`.',
    body: fromUrlBody, responses: { 202: envelope(fromUrlData) }, errors: [403, 404],
  });
}
