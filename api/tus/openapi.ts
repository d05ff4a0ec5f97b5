import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';

const tusResumable = z.literal('1.0.0').meta({ description: 'tus protocol version; anything else → 412 `tus_version`' });
const bytes = z.string().regex(/^\d+$/);
const RESPONSE = { 'X-Request-Id': z.string(), 'Tus-Resumable': z.literal('1.0.0') };

/**
 * tus 1.0.0 resumable uploads (SPEC §13, docs/uploads.md). Mounted without a prefix, like the
 * local upload URL; the upload resource is a capability URL (no key).
 */
export function tusDocs(d: DocContext): void {
  const tag = 'Uploads';
  const servers = [d.config.publicBaseUrl];
  const binary = z.string().meta({ format: 'binary' });
  const token = z.object({ token: z.string().meta({ description: 'The `Location` of the creation answer: the upload\'s capability' }) });

  operation(d, {
    method: 'options', path: '/upload/tus', operationId: 'tusCapabilities', tag, auth: false, servers,
    summary: 'tus discovery and CORS preflight',
    responses: {
      204: {
        description: 'Tus-Version, Tus-Extension (creation, creation-with-upload, termination, expiration), Tus-Max-Size',
        headers: z.object({ 'X-Request-Id': z.string(), 'Tus-Version': z.string(), 'Tus-Extension': z.string(), 'Tus-Max-Size': bytes }),
      },
    },
  });
  operation(d, {
    method: 'post', path: '/upload/tus', operationId: 'createTusUpload', tag, servers,
    summary: 'Create a video and its resumable upload (tus creation, creation-with-upload)',
    description: [
      'Metadata (base64 values, tus `Upload-Metadata`): `filename`, `content_type` (video/* or audio/*), `title`, `description`, `visibility`, `folder_id`.',
      'Answers 201 with `Location` (the upload URL, no key needed) and `Video-Id`. Then PATCH the bytes to `Location`; the video is processed once the last byte arrives.',
      'Errors: 412 `tus_version` (Tus-Resumable missing or not 1.0.0), 400 (Upload-Length missing or not positive, Upload-Defer-Length, bad metadata), 413 (Upload-Length above the resumable limit).',
      '`Idempotency-Key` replays the creation (same `Location` and `Video-Id`); the request is identified by `Upload-Length` and `Upload-Metadata`. A creation-with-upload that fails deletes the video it made.',
    ].join('\n'),
    headers: z.object({
      'Tus-Resumable': tusResumable,
      'Upload-Length': bytes.meta({ description: 'The file\'s size in bytes (Upload-Defer-Length is refused)' }),
      'Upload-Metadata': z.string().optional().meta({ description: 'tus metadata: `key base64value` pairs separated by commas' }),
    }),
    rawBody: { 'application/offset+octet-stream': binary },
    optionalBody: true,
    textErrors: true,
    responses: {
      201: {
        description: 'Created',
        headers: z.object({ ...RESPONSE, Location: z.string().meta({ description: '`{base_url}/upload/tus/<token>`' }), 'Video-Id': z.string(), 'Upload-Offset': bytes.optional() }),
      },
    },
    errors: [400, 403, 409, 412, 413, 415, 422],
  });

  const resource = { tag, auth: false, servers, params: token, textErrors: true } as const;
  operation(d, {
    ...resource, method: 'head', path: '/upload/tus/{token}', operationId: 'tusUploadOffset',
    summary: 'How many bytes the upload has (resume from Upload-Offset)',
    description: 'A completed upload answers its full length; an expired one 410 `upload_expired`.',
    headers: z.object({ 'Tus-Resumable': tusResumable }),
    responses: {
      200: { description: 'Upload-Offset and Upload-Length', headers: z.object({ ...RESPONSE, 'Upload-Offset': bytes, 'Upload-Length': bytes, 'Cache-Control': z.string() }) },
    },
    errors: [403, 404, 410, 412],
  });
  operation(d, {
    ...resource, method: 'patch', path: '/upload/tus/{token}', operationId: 'tusUploadChunk',
    summary: 'Append bytes at Upload-Offset',
    description: '409 when Upload-Offset is not the upload\'s current offset (or the upload is closed: `upload_closed`); 410 `upload_expired`; 413 past Upload-Length.',
    headers: z.object({ 'Tus-Resumable': tusResumable, 'Upload-Offset': bytes }),
    rawBody: { 'application/offset+octet-stream': binary },
    responses: { 204: { description: 'The new Upload-Offset', headers: z.object({ ...RESPONSE, 'Upload-Offset': bytes }) } },
    errors: [400, 403, 404, 409, 410, 412, 413, 415],
  });
  operation(d, {
    ...resource, method: 'delete', path: '/upload/tus/{token}', operationId: 'tusUploadTerminate',
    summary: 'Abandon the upload (tus termination): its stored bytes are removed',
    headers: z.object({ 'Tus-Resumable': tusResumable }),
    responses: { 204: { description: 'Terminated', headers: z.object(RESPONSE) } },
    errors: [403, 404, 409, 410, 412],
  });
  operation(d, {
    ...resource, method: 'options', path: '/upload/tus/{token}', operationId: 'tusUploadPreflight',
    summary: 'CORS preflight for the upload URL (the video\'s `cors_origin`, or any origin)',
    responses: { 204: { description: 'Access-Control-Allow-Methods: POST, HEAD, PATCH, DELETE, OPTIONS', headers: z.object({ 'X-Request-Id': z.string() }) } },
  });
}
