import { z } from 'zod';
import { DEFAULT_PLACEMENT, POSITIONS } from '../../lib/media/watermark';
import { isoDate } from '../openapi/common';

/** A fraction sent as a JSON number or a query string; anything but a plain decimal in range is refused. */
const fraction = (max: number, description: string, fallback: number) =>
  z
    .union([z.number(), z.string().regex(/^\d+(\.\d+)?$/, 'must be a decimal number').transform(Number)])
    .pipe(z.number().min(0).max(max))
    .optional()
    .meta({ description: `${description} (0–${max}; default ${fallback})`, example: fallback });

/** SPEC §24 placement, as query fields (image body) or JSON fields (`url` body). */
export const placementFields = {
  position: z.enum(POSITIONS).optional().meta({ description: `Corner or centre of the frame (default ${DEFAULT_PLACEMENT.position})` }),
  padding: fraction(0.5, "Margin: a fraction of the video's width (left/right) and height (top/bottom)", DEFAULT_PLACEMENT.padding),
  scale: fraction(1, "The mark's width as a fraction of the video's width (its height for a portrait video); 0 = the image's own size", DEFAULT_PLACEMENT.scale),
  opacity: fraction(1, '1 = opaque', DEFAULT_PLACEMENT.opacity),
  name: z.string().trim().min(1).max(200).optional(),
};

export const createWatermarkQuery = z.object(placementFields).strict();
export const createWatermarkBody = z
  .object({ url: z.string().min(1).max(2048).meta({ description: 'A public http(s) URL of a PNG or JPEG, fetched once under the URL-import guard' }), ...placementFields })
  .strict();

export const watermark = z
  .object({
    id: z.string().meta({ example: 'wm_0190d3c8e4a97c1e8f1b2a3c4d5e6f70' }),
    name: z.string().nullable(),
    content_type: z.enum(['image/png', 'image/jpeg']),
    width: z.number().int(),
    height: z.number().int(),
    size_bytes: z.number().int(),
    position: z.enum(POSITIONS),
    padding: z.number(),
    scale: z.number(),
    opacity: z.number(),
    created_at: isoDate,
  })
  .meta({ id: 'Watermark' });
export const watermarkList = z.object({ data: z.array(watermark) }).meta({ id: 'WatermarkList' });

export const watermarkDefaults = z.object({ default_watermark_id: z.string().nullable() }).meta({ id: 'WatermarkDefaults' });
export const patchWatermarkDefaultsBody = z.object({ default_watermark_id: z.string().max(100).nullable() }).strict();

/** `watermark_id` where a video or live stream is made: a profile of the workspace, null for none, absent for the default. */
export const watermarkIdField = z
  .string()
  .max(100)
  .nullable()
  .optional()
  .meta({ description: "SPEC §24: a watermark profile of this workspace burnt into every output; null: none; absent: the workspace's default_watermark_id" });
