import { z } from 'zod';
import { VIDEO_CODECS } from '../../lib/media/cmaf';

export const codecList = z.array(z.enum(VIDEO_CODECS)).min(1).max(3);

/** The workspace's encoding defaults (SPEC §21): the codecs of videos created without `codecs`. */
export const encodingDefaults = z
  .object({
    default_codecs: z.array(z.enum(VIDEO_CODECS)).meta({ description: 'Always starts with "h264"', example: ['h264', 'av1'] }),
  })
  .meta({ id: 'EncodingDefaults' });

export const patchEncodingDefaultsBody = z
  .object({
    default_codecs: codecList.meta({ description: 'H.264 is always kept (added when missing); "hevc" and/or "av1" add CMAF renditions and a DASH manifest', example: ['h264', 'av1'] }),
  })
  .partial()
  .strict();
