import { api, type Schemas } from '../api';
import { useLoad } from '../hooks';

type Watermark = Schemas['Watermark'];

/** A profile as a person would pick it: its name, else its id, with where it sits. */
export const watermarkLabel = (w: Watermark) => `${w.name || w.id} (${w.position})`;

/**
 * What the API takes for a choice of the picker (SPEC §24, api/watermarks/assert.ts): '' is the
 * workspace's default (the field left out), 'none' is no mark even with a default (null), else a
 * profile's id.
 */
export const watermarkChoice = (v: string): { watermark_id?: string | null } => (v === '' ? {} : { watermark_id: v === 'none' ? null : v });

/** The watermark picker of the Upload page and the Live stream form. */
export function WatermarkSelect(p: { name?: string; value?: string; onChange?: (v: string) => void }) {
  const list = useLoad(() => api<{ data: Watermark[] }>('GET', '/watermarks'), []);
  const defaults = useLoad(() => api<Schemas['WatermarkDefaults']>('GET', '/watermark-defaults'), []);
  const marks = list.data?.data ?? [];
  const fallback = marks.find((w) => w.id === defaults.data?.default_watermark_id);
  return (
    <select
      name={p.name}
      value={p.value}
      onChange={p.onChange && ((e) => p.onChange!((e.target as HTMLSelectElement).value))}
      data-watermark-select
    >
      <option value="">Workspace default{defaults.data ? ` (${fallback ? watermarkLabel(fallback) : 'none'})` : ''}</option>
      <option value="none">None</option>
      {marks.map((w) => (
        <option key={w.id} value={w.id}>
          {watermarkLabel(w)}
        </option>
      ))}
    </select>
  );
}
