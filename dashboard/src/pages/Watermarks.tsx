import { useEffect, useState } from 'preact/hooks';
import { DEFAULT_PLACEMENT, POSITIONS, type Placement, type Position } from '../../../lib/media/watermark';
import { BOUNDS, placementProblem } from '../placement';
import { api, qs, type Role, type Schemas } from '../api';
import { Collection, useActions } from '../components/collection';
import { MarkPreview } from '../components/MarkPreview';
import { ErrorNote } from '../components/ui';
import { watermarkLabel } from '../components/WatermarkSelect';
import { bytes, when } from '../format';
import { useLoad } from '../hooks';

type Watermark = Schemas['Watermark'];

const fields = (p: Placement) => ({ position: p.position, padding: String(p.padding), scale: String(p.scale), opacity: String(p.opacity) });

/**
 * SPEC §24 in the dashboard: the workspace's watermark profiles with their image where it lands,
 * a form to add one with a preview of its placement on a 16:9 picture, delete, and the
 * workspace's default. Changes are the owners' (the API answers a member 403): a member reads.
 */
export function WatermarksPage({ role }: { role: Role }) {
  const list = useLoad(() => api<{ data: Watermark[] }>('GET', '/watermarks'), []);
  const defaults = useLoad(() => api<Schemas['WatermarkDefaults']>('GET', '/watermark-defaults'), []);
  const { failure, run } = useActions(() => Promise.all([list.reload(), defaults.reload()]).then(() => undefined));
  const owner = role === 'owner';
  const current = defaults.data?.default_watermark_id ?? null;

  const setDefault = (id: string | null) => run(() => api('PATCH', '/watermark-defaults', { default_watermark_id: id }));
  const remove = async (w: Watermark) => {
    if (!confirm(`Delete the watermark "${w.name || w.id}"? Videos already made with it keep their mark.`)) return;
    await run(() => api('DELETE', `/watermarks/${w.id}`));
  };

  return (
    <>
      <h1>Watermarks</h1>
      <p>
        An image burnt into every rendition, thumbnail, storyboard and download of the videos that name it (or of every new video, as the
        workspace default). Its size and margins are fractions of the picture, so it sits at the same place at every resolution.
      </p>
      {owner ? <CreateWatermark onCreated={list.reload} /> : <p>Watermarks and the default are changed by the workspace's owners; as a member you can choose them for your uploads.</p>}
      <h2>Profiles</h2>
      <Collection<Watermark>
        error={failure ?? list.error ?? defaults.error}
        rows={list.data?.data}
        idAttribute="data-watermark-id"
        empty="No watermarks yet."
        columns={[
          {
            title: 'Image',
            cell: (w) => <MarkPreview small placement={w} src={`/v1/watermarks/${w.id}/image`} width={w.width} height={w.height} label={`${watermarkLabel(w)} on a 16:9 picture`} />,
          },
          { title: 'Name', wrap: true, cell: (w) => <>{w.name || <code>{w.id}</code>}{w.id === current && <> <span class="badge" data-default>Default</span></>}</> },
          { title: 'Placement', wrap: true, cell: (w) => `${w.position}, padding ${w.padding}, scale ${w.scale}, opacity ${w.opacity}` },
          { title: 'Image size', cell: (w) => `${w.width}×${w.height}, ${bytes(w.size_bytes)}` },
          { title: 'Created', cell: (w) => when(w.created_at) },
        ]}
        actions={
          owner
            ? (w) => (
                <>
                  {w.id === current ? (
                    <button type="button" class="secondary" onClick={() => setDefault(null)}>
                      Unset default
                    </button>
                  ) : (
                    <button type="button" class="secondary" onClick={() => setDefault(w.id)}>
                      Make default
                    </button>
                  )}
                  <button type="button" class="danger" onClick={() => remove(w)} aria-label={`Delete watermark ${w.name || w.id}`}>
                    Delete
                  </button>
                </>
              )
            : undefined
        }
      />
    </>
  );
}

/** The form: an image, its placement, and the preview of both before anything is sent. */
function CreateWatermark({ onCreated }: { onCreated: () => Promise<void> }) {
  const [file, setFile] = useState<File | null>(null);
  const [url, setUrl] = useState<string | null>(null);
  const [size, setSize] = useState<{ width: number; height: number } | null>(null);
  const [name, setName] = useState('');
  const [form, setForm] = useState(fields(DEFAULT_PLACEMENT));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [key, setKey] = useState(0);

  // The chosen file's own pixel size, for the preview's aspect (the API measures it again from the bytes).
  useEffect(() => {
    if (!file) return;
    const u = URL.createObjectURL(file);
    setUrl(u);
    setSize(null);
    const img = new Image();
    img.onload = () => setSize({ width: img.naturalWidth, height: img.naturalHeight });
    img.src = u;
    return () => URL.revokeObjectURL(u);
  }, [file]);

  const problem = placementProblem(form);
  const placement: Placement = problem ? DEFAULT_PLACEMENT : { position: form.position as Position, padding: Number(form.padding), scale: Number(form.scale), opacity: Number(form.opacity) };
  const set = (k: keyof typeof form) => (e: Event) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value });

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    if (!file) return setError(new Error('Choose a PNG or JPEG image'));
    if (problem) return setError(new Error(problem));
    setBusy(true);
    try {
      await api('POST', `/watermarks${qs({ ...form, name: name.trim() || undefined })}`, file);
      setFile(null);
      setUrl(null);
      setName('');
      setForm(fields(DEFAULT_PLACEMENT));
      setKey((k) => k + 1); // a fresh file input
      await onCreated();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="new-watermark" class="two">
      <form class="stack" onSubmit={submit} aria-label="Create a watermark" noValidate>
        <h2 id="new-watermark">New watermark</h2>
        <label>
          Image (PNG or JPEG, ≤ 1 MiB)
          <input key={key} type="file" accept="image/png,image/jpeg" onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
        </label>
        <label>
          Name
          <input value={name} maxLength={200} placeholder="e.g. Logo" onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <div class="row">
          <label>
            Position
            <select value={form.position} onChange={set('position')}>
              {POSITIONS.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </label>
          <label>
            Padding
            <input type="number" inputMode="decimal" min={0} max={BOUNDS.padding} step={0.01} value={form.padding} onInput={set('padding')} class="short" />
          </label>
          <label>
            Scale
            <input type="number" inputMode="decimal" min={0} max={BOUNDS.scale} step={0.01} value={form.scale} onInput={set('scale')} class="short" />
          </label>
          <label>
            Opacity
            <input type="number" inputMode="decimal" min={0} max={BOUNDS.opacity} step={0.05} value={form.opacity} onInput={set('opacity')} class="short" />
          </label>
        </div>
        <p class="hint">Padding: the margin as a fraction of the picture's width and height. Scale: the mark's width as a fraction of the picture's (0: the image's own size).</p>
        <ErrorNote error={error} />
        <div>
          <button type="submit" disabled={busy}>
            {busy ? 'Creating…' : 'Create watermark'}
          </button>
        </div>
      </form>
      <div>
        <h2>Preview</h2>
        <MarkPreview placement={placement} src={size ? url : null} width={size?.width ?? 0} height={size?.height ?? 0} label="Preview of the new watermark on a 16:9 picture" />
        {!file && <p class="hint">Choose an image to see where it lands.</p>}
      </div>
    </section>
  );
}
