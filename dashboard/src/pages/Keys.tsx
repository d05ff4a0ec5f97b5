import { useState } from 'preact/hooks';
import { api, type Page, type Schemas } from '../api';
import { ErrorNote, Secret, TableHead } from '../components/ui';
import { when } from '../format';
import { useLoad } from '../hooks';

/** `secret` only in the answer to creating one. */
type Key = Schemas['ApiKey'] & Partial<Pick<Schemas['CreatedApiKey'], 'secret'>>;

/** A member may make read keys only (docs/dashboard.md, "Roles"); the API enforces it, this only says so. */
export function KeysPage({ role }: { role: 'owner' | 'member' }) {
  const { data, error, reload } = useLoad(() => api<Page<Key>>('GET', '/api-keys'), []);
  const [created, setCreated] = useState<Key | null>(null);
  const [failure, setFailure] = useState<unknown>(null);

  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    setFailure(null);
    try {
      setCreated(await api<Key>('POST', '/api-keys', { name: String(f.get('name')), access: f.get('access') }));
      form.reset();
      await reload();
    } catch (err) {
      setFailure(err);
    }
  };
  const revoke = async (k: Key) => {
    if (!confirm(`Revoke the key "${k.name || k.prefix}"? Programs using it stop working at once.`)) return;
    setFailure(null);
    try {
      await api('DELETE', `/api-keys/${k.id}`);
      if (created?.id === k.id) setCreated(null);
      await reload();
    } catch (err) {
      setFailure(err);
    }
  };

  return (
    <>
      <h1>API Keys</h1>
      <p>Keys let your programs call the API. A read key may only read; a full key may change everything in this workspace.</p>
      <form class="row" onSubmit={create} aria-label="Create an API key">
        <label>
          Name
          <input name="name" maxLength={100} placeholder="e.g. production server" />
        </label>
        <label>
          Access
          <select name="access" defaultValue="read">
            <option value="read">Read</option>
            {role === 'owner' && <option value="full">Full</option>}
          </select>
        </label>
        <button type="submit">Create key</button>
      </form>
      {role === 'member' && <p>As a member you can make read keys and revoke the keys you made; owners manage the rest.</p>}
      {created?.secret && <Secret title={`New ${created.access} key "${created.name}".`} value={created.secret} />}
      <ErrorNote error={failure ?? error} />
      <table>
        <TableHead cols={['Name', 'Key', 'Access', 'Created', 'Last used', '']} />
        <tbody>
          {data?.data.map((k) => (
            <tr key={k.id} data-key-id={k.id}>
              <td>{k.name || '—'}</td>
              <td>
                <code>{k.prefix}…</code>
              </td>
              <td>{k.access}</td>
              <td>{when(k.created_at)}</td>
              <td>{when(k.last_used_at)}</td>
              <td>
                <button type="button" class="danger" onClick={() => revoke(k)} aria-label={`Revoke key ${k.name || k.prefix}`}>
                  Revoke
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
