import { z } from 'zod';

// Same bounds as the names accepted in a video's `tags`.
export const createTagBody = z.object({ name: z.string().trim().min(1).max(64) }).strict();

export const tag = z.object({ id: z.string(), name: z.string(), created_at: z.iso.datetime() }).meta({ id: 'Tag' });
export const tagList = z.object({ data: z.array(tag) }).meta({ id: 'TagList' });
