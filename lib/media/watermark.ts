// Pure: THE watermark filter graph (SPEC §24, docs/watermarks.md). Every output that decodes the
// source (the ladder's chunks, the aligned ladder and the on-request rungs, the CMAF rungs, the
// thumbnail, the per-rung encode) builds its video filter with `markedFilter`; outputs cut from
// renditions (MP4 downloads, GIF and stills, the storyboard) inherit the mark and never add one.
// No I/O, no Node built-ins: imported by workflow code.

export const POSITIONS = ['top-left', 'top-right', 'bottom-left', 'bottom-right', 'center'] as const;
export type Position = (typeof POSITIONS)[number];

/** A profile's placement (SPEC §24): fractions of the video's frame. */
export type Placement = { position: Position; padding: number; scale: number; opacity: number };
export const DEFAULT_PLACEMENT: Placement = Object.freeze({ position: 'bottom-right', padding: 0.05, scale: 0.15, opacity: 1 });

/** A mark ready for ffmpeg: the image as a local file (readable in the sandbox), its size and placement. */
export type Mark = Placement & { file: string; format: 'png' | 'jpeg'; width: number; height: number };

export type Box = { x: number; y: number; width: number; height: number };

/**
 * Where the mark lands on a `frame`-sized picture, in whole pixels. Its width is `scale` × the
 * frame's width (its height for a portrait frame), its aspect kept; `scale` 0 is the image's own
 * size. It never exceeds the frame. The margins are `padding` × the width (left/right) and ×
 * the height (top/bottom); `center` has none.
 */
export function markBox(mark: Pick<Mark, 'position' | 'padding' | 'scale' | 'width' | 'height'>, frame: { width: number; height: number }): Box {
  const portrait = frame.height > frame.width;
  let width = mark.scale > 0 ? Math.round(mark.scale * (portrait ? frame.height : frame.width)) : mark.width;
  let height = Math.round((width * mark.height) / mark.width);
  const fit = Math.min(1, frame.width / width, frame.height / height);
  if (fit < 1) {
    width = Math.floor(width * fit);
    height = Math.floor(height * fit);
  }
  width = Math.max(1, width);
  height = Math.max(1, height);
  const mx = Math.round(mark.padding * frame.width);
  const my = Math.round(mark.padding * frame.height);
  const clamp = (v: number, max: number) => Math.max(0, Math.min(v, max));
  const left = clamp(mx, frame.width - width);
  const right = clamp(frame.width - width - mx, frame.width - width);
  const top = clamp(my, frame.height - height);
  const bottom = clamp(frame.height - height - my, frame.height - height);
  const cx = Math.floor((frame.width - width) / 2);
  const cy = Math.floor((frame.height - height) / 2);
  const [x, y] = {
    'top-left': [left, top],
    'top-right': [right, top],
    'bottom-left': [left, bottom],
    'bottom-right': [right, bottom],
    center: [cx, cy],
  }[mark.position];
  return { x, y, width, height };
}

// The file goes into a filter-graph option: only characters that need no escaping there.
const SAFE_PATH = /^[A-Za-z0-9_./-]+$/;
const num = (n: number): string => String(Math.round(n * 1000) / 1000);

/**
 * A video filter that runs `chain` (the output's own filters before the mark: a scale, …), burns
 * `mark` into its result, a `frame`-sized picture, then runs `then` (filters after the mark: the
 * thumbnail's downscale); without a mark, `chain` and `then` alone. `input` and `output` are the
 * pads' labels (`[v0]`, `[o0]`) inside a -filter_complex, or empty for a -vf. `tag` keeps the
 * mark's own pad names unique when several chains share one graph.
 *
 * The image is read by the `movie` source with its demuxer named (never probed), scaled to the
 * box, given its opacity in the alpha plane, and overlaid at the box's corner; the one-frame source
 * is repeated over the whole video (overlay's `eof_action=repeat`).
 */
export function markedFilter(o: { chain?: string; then?: string; frame: { width: number; height: number }; mark?: Mark | null; input?: string; output?: string; tag?: string }): string {
  const input = o.input ?? '';
  const output = o.output ?? '';
  const before = o.chain ?? '';
  const after = o.then ?? '';
  if (!o.mark) return `${input}${[before, after].filter(Boolean).join(',') || 'null'}${output}`;
  const m = o.mark;
  if (!SAFE_PATH.test(m.file)) throw new RangeError(`watermark file path has characters a filter graph would need escaped: ${m.file}`);
  const tag = o.tag ?? 'wm';
  const box = markBox(m, o.frame);
  const alpha = m.opacity < 1 ? `,colorchannelmixer=aa=${num(m.opacity)}` : '';
  return [
    `${input}${before || 'null'}[${tag}base]`,
    `movie=filename=${m.file}:f=${m.format === 'png' ? 'png_pipe' : 'jpeg_pipe'},scale=${box.width}:${box.height}:flags=lanczos,format=rgba${alpha}[${tag}img]`,
    `[${tag}base][${tag}img]overlay=x=${box.x}:y=${box.y}:eof_action=repeat${after ? `,${after}` : ''}${output}`,
  ].join(';');
}

/** A mark as stored (a profile's row, an on-request plan): the image's storage key, not a local file. */
export type StoredMark = Placement & { key: string; format: 'png' | 'jpeg'; width: number; height: number };

/** The stored mark with its image fetched to `file`. */
export const markAt = (stored: StoredMark, file: string): Mark => ({
  position: stored.position, padding: stored.padding, scale: stored.scale, opacity: stored.opacity,
  format: stored.format, width: stored.width, height: stored.height, file,
});
