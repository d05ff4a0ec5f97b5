import { z } from 'zod';

const MAX_FILENAME = 1024;
export const contentType = z
  .string()
  .regex(/^video\/[a-z0-9][a-z0-9.+-]*$/i, 'must be a video/* media type')
  .transform((s) => s.toLowerCase());
export const visibility = z.enum(['public', 'unlisted', 'private']);
export const tagNames = z.array(z.string().trim().min(1).max(64)).max(50);

/** Optional metadata accepted at creation (init, presigned, from-url). */
export const videoMeta = {
  title: z.string().trim().min(1).max(200).optional(),
  description: z.string().max(5000).optional(),
  visibility: visibility.optional(),
  folder_id: z.string().nullable().optional(),
  tags: tagNames.optional(),
};

export const initBody = (maxBytes: number) =>
  z.object({
    filename: z.string().min(1).max(MAX_FILENAME),
    size: z.number().int().min(1).max(maxBytes, `must be at most ${maxBytes} bytes`),
    content_type: contentType,
    ...videoMeta,
  });

export const presignedBody = (maxBytes: number) =>
  z.object({
    workspace_id: z.string().min(1),
    filename: z.string().min(1).max(MAX_FILENAME),
    file_size: z.number().int().min(1).max(maxBytes, `must be at most ${maxBytes} bytes`),
    content_type: contentType,
    ...videoMeta,
  });

export const completeBody = z.object({ video_id: z.string().min(1) });
