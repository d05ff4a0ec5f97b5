import { POSITIONS } from '../../lib/media/watermark';

/** The placement fields' upper bounds as the API has them (api/watermarks/schema.ts; 0 is every lower bound). */
export const BOUNDS = { padding: 0.5, scale: 1, opacity: 1 } as const;

export type PlacementForm = { position: string; padding: string; scale: string; opacity: string };

/**
 * Why the API would refuse this placement (400 `invalid_parameters`), said before the image is
 * sent; null when it would take it. Plain decimals only, as the API's query fields.
 */
export function placementProblem(f: PlacementForm): string | null {
  if (!(POSITIONS as readonly string[]).includes(f.position)) return `Position must be one of ${POSITIONS.join(', ')}`;
  for (const [field, max] of Object.entries(BOUNDS)) {
    const text = f[field as keyof typeof BOUNDS].trim();
    if (!/^\d+(\.\d+)?$/.test(text) || Number(text) > max) return `${field[0].toUpperCase()}${field.slice(1)} must be a number from 0 to ${max}`;
  }
  return null;
}
