import { useState } from 'preact/hooks';
import { api, type Page, type Schemas } from '../api';
import { ErrorNote } from '../components/ui';
import { useLoad } from '../hooks';

type Folder = Schemas['Folder'];
type Tag = Schemas['Tag'];

export function LibraryPage() {
  const folders = useLoad(() => api<Page<Folder>>('GET', '/folders'), []);
  const tags = useLoad(() => api<Page<Tag>>('GET', '/tags'), []);
  const [error, setError] = useState<unknown>(null);
  const act = (fn: () => Promise<unknown>, after: () => unknown) => async (e?: Event) => {
    e?.preventDefault();
    setError(null);
    try {
      await fn();
      await after();
      if (e?.target instanceof HTMLFormElement) e.target.reset();
    } catch (err) {
      setError(err);
    }
  };
  const field = (e: Event, name: string) => String(new FormData(e.target as HTMLFormElement).get(name) ?? '');
  const nameOf = (id: string | null) => folders.data?.data.find((f) => f.id === id)?.name;

  return (
    <>
      <h1>Folders & tags</h1>
      <ErrorNote error={error ?? folders.error ?? tags.error} />
      <div class="two">
        <section aria-labelledby="folders-h">
          <h2 id="folders-h">Folders</h2>
          <form class="row" onSubmit={(e) => act(() => api('POST', '/folders', { name: field(e, 'name'), parent_id: field(e, 'parent_id') || null }), folders.reload)(e)}>
            <label>
              New folder
              <input name="name" required maxLength={200} />
            </label>
            <label>
              Inside
              <select name="parent_id">
                <option value="">(root)</option>
                {folders.data?.data.map((f) => (
                  <option key={f.id} value={f.id}>
                    {f.name}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit">Create folder</button>
          </form>
          <ul class="plain">
            {folders.data?.data.map((f) => (
              <li key={f.id} class="row spread">
                <span>
                  {f.name}
                  {f.parent_id && <small> in {nameOf(f.parent_id)}</small>}
                </span>
                <span class="row">
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Rename folder ${f.name}`}
                    onClick={() => {
                      const name = prompt('New name', f.name);
                      if (name) void act(() => api('PATCH', `/folders/${f.id}`, { name }), folders.reload)();
                    }}
                  >
                    Rename
                  </button>
                  <button
                    type="button"
                    class="danger"
                    aria-label={`Delete folder ${f.name}`}
                    onClick={() => confirm(`Delete folder "${f.name}"? Its videos move to the root.`) && act(() => api('DELETE', `/folders/${f.id}`), folders.reload)()}
                  >
                    Delete
                  </button>
                </span>
              </li>
            ))}
          </ul>
        </section>
        <section aria-labelledby="tags-h">
          <h2 id="tags-h">Tags</h2>
          <form class="row" onSubmit={(e) => act(() => api('POST', '/tags', { name: field(e, 'name') }), tags.reload)(e)}>
            <label>
              New tag
              <input name="name" required maxLength={64} />
            </label>
            <button type="submit">Create tag</button>
          </form>
          <ul class="plain">
            {tags.data?.data.map((t) => (
              <li key={t.id} class="row spread">
                <span class="tag">{t.name}</span>
                <button
                  type="button"
                  class="danger"
                  aria-label={`Delete tag ${t.name}`}
                  onClick={() => confirm(`Delete tag "${t.name}" from every video?`) && act(() => api('DELETE', `/tags/${t.id}`), tags.reload)()}
                >
                  Delete
                </button>
              </li>
            ))}
          </ul>
        </section>
      </div>
    </>
  );
}
