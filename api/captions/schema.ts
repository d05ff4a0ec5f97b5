import { z } from 'zod';

const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const captionQuery = z.object({
  label: z.string().trim().min(1).max(100).optional(),
  default: flag.optional(),
});

/** The caption file's format, from its Content-Type. */
export function captionFormat(contentType: string): 'vtt' | 'srt' | null {
  if (/^\s*text\/vtt\s*(;|$)/i.test(contentType)) return 'vtt';
  if (/^\s*(application\/x-subrip|text\/srt)\s*(;|$)/i.test(contentType)) return 'srt';
  return null;
}

/** POST …/align as JSON (issue 37); text/plain bodies are the transcript itself. */
export const transcriptBody = z.strictObject({ text: z.string().min(1).meta({ description: 'The transcript, plain UTF-8 text (≤ 200 KB)' }) });
