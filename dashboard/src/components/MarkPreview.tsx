import { markBox, type Placement } from '../../../lib/media/watermark';

/**
 * Where a watermark lands on a 16:9 picture, drawn with the encoder's own `markBox`
 * (lib/media/watermark.ts, SPEC §24): the box is computed on a 1280×720 frame and laid over the
 * preview in percentages, so it is the same fraction of any 16:9 rendition (±1 px per rung).
 */
export const PREVIEW_FRAME = Object.freeze({ width: 1280, height: 720 });

const pct = (v: number, of: number) => `${((v / of) * 100).toFixed(4)}%`;

export function MarkPreview(p: { placement: Placement; src: string | null; width: number; height: number; label: string; small?: boolean }) {
  const box = p.src && p.width > 0 && p.height > 0 ? markBox({ ...p.placement, width: p.width, height: p.height }, PREVIEW_FRAME) : null;
  return (
    <div class={`mark-frame${p.small ? ' small' : ''}`} role="img" aria-label={p.label} data-mark-frame>
      {box && (
        <img
          src={p.src!}
          alt=""
          data-mark-box={`${box.x},${box.y},${box.width},${box.height}`}
          style={{
            left: pct(box.x, PREVIEW_FRAME.width),
            top: pct(box.y, PREVIEW_FRAME.height),
            width: pct(box.width, PREVIEW_FRAME.width),
            height: pct(box.height, PREVIEW_FRAME.height),
            opacity: p.placement.opacity,
          }}
        />
      )}
    </div>
  );
}
