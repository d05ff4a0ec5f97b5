import { z } from 'zod';
import { type DocContext, operation } from '../openapi/operation';
import { createWatermarkBody, createWatermarkQuery, patchWatermarkDefaultsBody, watermark, watermarkDefaults, watermarkList } from './schema';

const image = z.string().meta({ format: 'binary', description: 'The image itself (placement in the query)' });

export function watermarkDocs(d: DocContext): void {
  const tag = 'Watermarks';
  const params = z.object({ id: z.string().meta({ example: 'wm_…' }) });
  operation(d, {
    method: 'post', path: '/watermarks', operationId: 'createWatermark', tag,
    summary:
      'Create a watermark profile (SPEC §24): the body is the image (image/png or image/jpeg, ≤ 1 MiB, ≤ 4096×4096; placement as query fields) or JSON { "url": … } with the placement. ' +
      'Refusals: 415 `unsupported_image_type`, 413 `image_too_large`, 400 `invalid_image`, `image_dimensions_too_large`, `image_decompression_bomb`, `image_animated`, `image_cmyk`, `url_not_allowed`, `url_fetch_failed`, `invalid_parameters`',
    query: createWatermarkQuery, rawBody: { 'image/png': image, 'image/jpeg': image, 'application/json': createWatermarkBody }, responses: { 201: watermark }, errors: [400, 403, 413, 415],
  });
  operation(d, { method: 'get', path: '/watermarks', operationId: 'listWatermarks', tag, summary: "The workspace's watermark profiles (oldest first)", responses: { 200: watermarkList }, errors: [] });
  operation(d, { method: 'get', path: '/watermarks/{id}', operationId: 'getWatermark', tag, summary: 'Read a watermark profile', params, responses: { 200: watermark }, errors: [404] });
  operation(d, {
    method: 'get', path: '/watermarks/{id}/image', operationId: 'getWatermarkImage', tag, summary: "A watermark profile's image, as it was uploaded (image/png or image/jpeg)",
    params, responses: { 200: { description: 'The image', content: { 'image/png': { schema: image }, 'image/jpeg': { schema: image } } } }, errors: [404],
  });
  operation(d, {
    method: 'delete', path: '/watermarks/{id}', operationId: 'deleteWatermark', tag, summary: 'Delete a watermark profile; videos already made keep their mark',
    params, responses: { 204: { description: 'Deleted' } }, errors: [403, 404],
  });
  operation(d, { method: 'get', path: '/watermark-defaults', operationId: 'getWatermarkDefaults', tag, summary: "The workspace's default watermark (new videos and live streams naming none)", responses: { 200: watermarkDefaults }, errors: [] });
  operation(d, {
    method: 'patch', path: '/watermark-defaults', operationId: 'updateWatermarkDefaults', tag, summary: "Set the workspace's default watermark (null: none); existing videos keep theirs",
    body: patchWatermarkDefaultsBody, responses: { 200: watermarkDefaults }, errors: [400, 403],
  });
}
