import { Metadata } from '@tus/utils';
import { z } from 'zod';
import { badRequest } from '../errors';
import { assertNoNul } from '../middleware/validate';
import { contentType, videoMeta } from '../upload/schema';

/**
 * `Upload-Metadata` of POST /upload/tus (SPEC §13). Uppy and tus-js-client examples name the
 * fields `name`/`filetype`; both spellings are accepted.
 */
const schema = z.object({
  filename: z.string().min(1).max(1024),
  content_type: contentType,
  title: videoMeta.title,
  description: videoMeta.description,
  visibility: videoMeta.visibility,
  folder_id: z.string().optional(),
  watermark_id: z.string().max(100).optional(),
});

export type TusCreation = z.infer<typeof schema>;

export function parseTusMetadata(header: string | undefined): TusCreation {
  let raw: Record<string, string | null>;
  try {
    raw = Metadata.parse(header ?? '');
  } catch {
    throw badRequest('invalid_parameters', 'Upload-Metadata is not valid tus metadata (comma-separated "key base64value" pairs)');
  }
  assertNoNul(raw, 'Upload-Metadata');
  const pick = (...names: string[]) => names.map((n) => raw[n]).find((v) => v !== undefined && v !== null) ?? undefined;
  const r = schema.safeParse({
    filename: pick('filename', 'name'),
    content_type: pick('content_type', 'filetype', 'contentType'),
    title: pick('title'),
    description: pick('description'),
    visibility: pick('visibility'),
    folder_id: pick('folder_id'),
    watermark_id: pick('watermark_id'),
  });
  if (!r.success) {
    throw badRequest(
      'invalid_parameters',
      'Upload-Metadata has invalid fields',
      r.error.issues.map((i) => ({ field: `Upload-Metadata.${i.path.join('.')}`, message: i.message })),
    );
  }
  return r.data;
}
