import { useState } from 'preact/hooks';
import { api, type Schemas } from '../api';
import { ErrorNote } from '../components/ui';
import { when } from '../format';
import { useLoad } from '../hooks';

type Restriction = Schemas['PlaybackRestriction'];

type Defaults = Schemas['PlaybackDefaults'];

/** "a.com, *.b.com\nc.com" → ["a.com", "*.b.com", "c.com"] */
const domainsOf = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((d) => d.trim())
    .filter(Boolean);

/** SPEC §20 playback restrictions: create, edit, delete, and the workspace's defaults. */
export function RestrictionsPage() {
  const list = useLoad(() => api<{ data: Restriction[] }>('GET', '/playback-restrictions'), []);
  const defaults = useLoad(() => api<Defaults>('GET', '/playback-defaults'), []);
  const [editing, setEditing] = useState<string | null>(null);
  const [failure, setFailure] = useState<unknown>(null);

  const attempt = async (fn: () => Promise<unknown>) => {
    setFailure(null);
    try {
      await fn();
      return true;
    } catch (err) {
      setFailure(err);
      return false;
    }
  };

  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const ok = await attempt(() =>
      api('POST', '/playback-restrictions', { referrer: { allowed_domains: domainsOf(String(f.get('domains'))), allow_no_referrer: f.get('no_referrer') === 'on' } }),
    );
    if (ok) {
      form.reset();
      await list.reload();
    }
  };

  const save = async (e: Event, r: Restriction) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    const ok = await attempt(() =>
      api('PATCH', `/playback-restrictions/${r.id}`, { referrer: { allowed_domains: domainsOf(String(f.get('domains'))), allow_no_referrer: f.get('no_referrer') === 'on' } }),
    );
    if (ok) {
      setEditing(null);
      await list.reload();
    }
  };

  const remove = async (r: Restriction) => {
    if (!confirm(`Delete ${r.id}? Videos that use it will play on any site.`)) return;
    if (await attempt(() => api('DELETE', `/playback-restrictions/${r.id}`))) await Promise.all([list.reload(), defaults.reload()]);
  };

  const setDefaults = async (patch: Partial<Defaults>) => {
    if (await attempt(() => api('PATCH', '/playback-defaults', patch))) await defaults.reload();
  };

  return (
    <>
      <h1>Restrictions</h1>
      <p>
        Allow-lists of the sites your videos may play on (checked on the Referer, then the Origin, of every playlist, segment, key and
        download, and on the embed page). Use <code>*.example.com</code> for subdomains, <code>example.com:8443</code> for one port.
      </p>
      <form class="row" onSubmit={create} aria-label="Create a playback restriction">
        <label>
          Allowed domains
          <input name="domains" required placeholder="example.com, *.example.com" />
        </label>
        <label>
          <input type="checkbox" name="no_referrer" defaultChecked /> Allow requests without a Referer
        </label>
        <button type="submit">Create restriction</button>
      </form>
      <ErrorNote error={failure ?? list.error ?? defaults.error} />
      {defaults.data && (
        <form class="row" aria-label="Workspace defaults" onSubmit={(e) => e.preventDefault()}>
          <label>
            Default restriction
            <select
              value={defaults.data.default_playback_restriction_id ?? ''}
              onChange={(e) => setDefaults({ default_playback_restriction_id: (e.target as HTMLSelectElement).value || null })}
            >
              <option value="">None</option>
              {list.data?.data.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.referrer.allowed_domains.join(', ') || '(no domains)'} — {r.id}
                </option>
              ))}
            </select>
          </label>
          <label>
            Encryption of new videos
            <select value={defaults.data.default_encryption} onChange={(e) => setDefaults({ default_encryption: (e.target as HTMLSelectElement).value as Defaults['default_encryption'] })}>
              <option value="none">None</option>
              <option value="aes-128">AES-128</option>
            </select>
          </label>
        </form>
      )}
      <table>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Allowed domains</th>
            <th scope="col">No Referer</th>
            <th scope="col">Updated</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {list.data?.data.map((r) =>
            editing === r.id ? (
              <tr key={r.id} data-restriction-id={r.id}>
                <td colSpan={5}>
                  <form class="row" onSubmit={(e) => save(e, r)} aria-label={`Edit ${r.id}`}>
                    <input name="domains" defaultValue={r.referrer.allowed_domains.join(', ')} aria-label="Allowed domains" />
                    <label>
                      <input type="checkbox" name="no_referrer" defaultChecked={r.referrer.allow_no_referrer} /> No Referer allowed
                    </label>
                    <button type="submit">Save</button>
                    <button type="button" onClick={() => setEditing(null)}>
                      Cancel
                    </button>
                  </form>
                </td>
              </tr>
            ) : (
              <tr key={r.id} data-restriction-id={r.id}>
                <td>
                  <code>{r.id}</code>
                </td>
                <td>{r.referrer.allowed_domains.join(', ') || '—'}</td>
                <td>{r.referrer.allow_no_referrer ? 'allowed' : 'refused'}</td>
                <td>{when(r.updated_at)}</td>
                <td>
                  <button type="button" onClick={() => setEditing(r.id)}>
                    Edit
                  </button>{' '}
                  <button type="button" class="danger" onClick={() => remove(r)} aria-label={`Delete restriction ${r.id}`}>
                    Delete
                  </button>
                </td>
              </tr>
            ),
          )}
        </tbody>
      </table>
    </>
  );
}
