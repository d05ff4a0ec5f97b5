import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';

/** The local driver's upload URL (`upload_url` from init/presigned); the token is the credential. */
export function storageDocs(d: DocContext): void {
  operation(d, {
    method: 'put', path: '/storage/upload/{token}', operationId: 'putLocalUpload', tag: 'Uploads', auth: false,
    servers: [d.config.publicBaseUrl],
    summary: 'Upload the file (local storage driver; S3 upload URLs go to the bucket instead)',
    description: 'Content-Type and Content-Length must be those declared at init; more bytes than declared → 413.',
    params: z.object({ token: z.string() }),
    rawBody: { 'video/*': z.string().meta({ format: 'binary' }) },
    responses: { 200: z.object({ key: z.string(), size: z.number().int() }) },
    errors: [400, 403, 404, 409, 413],
  });
  operation(d, {
    method: 'options', path: '/storage/upload/{token}', operationId: 'preflightLocalUpload', tag: 'Uploads', auth: false,
    servers: [d.config.publicBaseUrl],
    summary: 'CORS preflight for the local upload URL (the video\'s `cors_origin`, or any origin)',
    params: z.object({ token: z.string() }),
    responses: { 204: { description: 'Access-Control-Allow-Methods: PUT, OPTIONS' } },
  });
}
