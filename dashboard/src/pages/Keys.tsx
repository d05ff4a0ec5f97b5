import { useState } from 'preact/hooks';
import { api, type Me, type Page, type Role, type Schemas } from '../api';
import { Collection, useActions } from '../components/collection';
import { Secret } from '../components/ui';
import { when } from '../format';
import { useLoad } from '../hooks';

/** `secret` only in the answer to creating one. */
type Key = Schemas['ApiKey'] & Partial<Pick<Schemas['CreatedApiKey'], 'secret'>>;

/**
 * A member may make read keys and revoke the keys they made (docs/dashboard.md, "Roles"): the
 * form offers them "Read" only, and Revoke shows on their own keys only. The API enforces it.
 */
export function KeysPage({ role, person }: { role: Role; person: Me['person'] }) {
  const { data, error, reload } = useLoad(() => api<Page<Key>>('GET', '/api-keys'), []);
  const [created, setCreated] = useState<Key | null>(null);
  const { failure, run } = useActions(reload);
  const mayRevoke = (k: Key) => role === 'owner' || k.created_by === person.id;

  const revoke = async (k: Key) => {
    if (!confirm(`Revoke the key "${k.name || k.prefix}"? Programs using it stop working at once.`)) return;
    await run(async () => {
      await api('DELETE', `/api-keys/${k.id}`);
      if (created?.id === k.id) setCreated(null);
    });
  };

  return (
    <>
      <h1>API Keys</h1>
      <p>Keys let your programs call the API. A read key may only read; a full key may change everything in this workspace.</p>
      <Collection<Key>
        create={{
          label: 'Create an API key',
          submit: 'Create key',
          onCreate: (f) => run(async () => setCreated(await api<Key>('POST', '/api-keys', { name: String(f.get('name')), access: f.get('access') }))),
          fields: [
            ['Name', <input name="name" maxLength={100} placeholder="e.g. production server" />],
            [
              'Access',
              <select name="access" defaultValue="read">
                <option value="read">Read</option>
                {role === 'owner' && <option value="full">Full</option>}
              </select>,
            ],
          ],
        }}
        error={failure ?? error}
        rows={data?.data}
        idAttribute="data-key-id"
        columns={[
          { title: 'Name', cell: (k) => k.name || '—' },
          { title: 'Key', cell: (k) => <code>{k.prefix}…</code> },
          { title: 'Access', cell: (k) => k.access },
          { title: 'Created', cell: (k) => when(k.created_at) },
          { title: 'Last used', cell: (k) => when(k.last_used_at) },
        ]}
        actions={(k) =>
          mayRevoke(k) && (
            <button type="button" class="danger" onClick={() => revoke(k)} aria-label={`Revoke key ${k.name || k.prefix}`}>
              Revoke
            </button>
          )
        }
      >
        {role === 'member' && <p>As a member you can make read keys and revoke the keys you made; owners manage the rest.</p>}
        {created?.secret && <Secret title={`New ${created.access} key "${created.name}".`} value={created.secret} />}
      </Collection>
    </>
  );
}
