import { useState } from 'preact/hooks';
import { api, type Role, type Schemas } from '../api';
import { Collection, useActions } from '../components/collection';
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

const referrerOf = (f: FormData) => ({ referrer: { allowed_domains: domainsOf(String(f.get('domains'))), allow_no_referrer: f.get('no_referrer') === 'on' } });

/**
 * SPEC §20 playback restrictions: create, edit, delete, and the workspace's defaults. They are
 * the owners' to change (docs/dashboard.md, "Roles"): a member sees them, read-only.
 */
export function RestrictionsPage({ role }: { role: Role }) {
  const list = useLoad(() => api<{ data: Restriction[] }>('GET', '/playback-restrictions'), []);
  const defaults = useLoad(() => api<Defaults>('GET', '/playback-defaults'), []);
  const [editing, setEditing] = useState<string | null>(null);
  const { failure, run } = useActions(list.reload);
  const owner = role === 'owner';

  const save = async (e: Event, r: Restriction) => {
    e.preventDefault();
    const f = new FormData(e.target as HTMLFormElement);
    if (await run(() => api('PATCH', `/playback-restrictions/${r.id}`, referrerOf(f)))) setEditing(null);
  };

  const remove = async (r: Restriction) => {
    if (!confirm(`Delete ${r.id}? Videos that use it will play on any site.`)) return;
    await run(() => api('DELETE', `/playback-restrictions/${r.id}`), () => Promise.all([list.reload(), defaults.reload()]));
  };

  const setDefaults = (patch: Partial<Defaults>) => run(() => api('PATCH', '/playback-defaults', patch), defaults.reload);

  return (
    <>
      <h1>Restrictions</h1>
      <p>
        Allow-lists of the sites your videos may play on (checked on the Referer, then the Origin, of every playlist, segment, key and
        download, and on the embed page). Use <code>*.example.com</code> for subdomains, <code>example.com:8443</code> for one port.
      </p>
      <Collection<Restriction>
        create={
          owner && {
            label: 'Create a playback restriction',
            submit: 'Create restriction',
            onCreate: (f) => run(() => api('POST', '/playback-restrictions', referrerOf(f))),
            fields: [
              ['Allowed domains', <input name="domains" required placeholder="example.com, *.example.com" />],
              [
                '',
                <label class="check">
                  <input type="checkbox" name="no_referrer" defaultChecked /> Allow requests without a Referer
                </label>,
              ],
            ],
          }
        }
        error={failure ?? list.error ?? defaults.error}
        rows={list.data?.data}
        idAttribute="data-restriction-id"
        columns={[
          { title: 'Id', cell: (r) => <code>{r.id}</code> },
          { title: 'Allowed domains', cell: (r) => r.referrer.allowed_domains.join(', ') || '—' },
          { title: 'No Referer', cell: (r) => (r.referrer.allow_no_referrer ? 'allowed' : 'refused') },
          { title: 'Updated', cell: (r) => when(r.updated_at) },
        ]}
        actions={
          owner
            ? (r) => (
                <>
                  <button type="button" onClick={() => setEditing(r.id)}>
                    Edit
                  </button>{' '}
                  <button type="button" class="danger" onClick={() => remove(r)} aria-label={`Delete restriction ${r.id}`}>
                    Delete
                  </button>
                </>
              )
            : undefined
        }
        replace={(r) =>
          editing === r.id ? (
            <form class="row" onSubmit={(e) => save(e, r)} aria-label={`Edit ${r.id}`}>
              <input name="domains" defaultValue={r.referrer.allowed_domains.join(', ')} aria-label="Allowed domains" />
              <label class="check">
                <input type="checkbox" name="no_referrer" defaultChecked={r.referrer.allow_no_referrer} /> No Referer allowed
              </label>
              <button type="submit">Save</button>
              <button type="button" onClick={() => setEditing(null)}>
                Cancel
              </button>
            </form>
          ) : null
        }
      >
        {!owner && <p>Restrictions and the defaults are changed by the workspace's owners; as a member you can read them and choose them for your videos.</p>}
        {defaults.data && <h2 id="workspace-defaults">Workspace defaults</h2>}
        {defaults.data && (
          <form class="row defaults" aria-label="Workspace defaults" onSubmit={(e) => e.preventDefault()}>
            <label>
              Default restriction
              <select
                disabled={!owner}
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
              <select
                disabled={!owner}
                value={defaults.data.default_encryption}
                onChange={(e) => setDefaults({ default_encryption: (e.target as HTMLSelectElement).value as Defaults['default_encryption'] })}
              >
                <option value="none">None</option>
                <option value="aes-128">AES-128</option>
              </select>
            </label>
          </form>
        )}
      </Collection>
    </>
  );
}
