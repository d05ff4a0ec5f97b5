import { useState } from 'preact/hooks';
import { api, qs, type Page, type Role, type Schemas } from '../api';
import { Collection, useActions } from '../components/collection';
import { ErrorNote, Link, Secret, TableHead } from '../components/ui';
import { when } from '../format';
import { useLoad, usePoll } from '../hooks';

const EVENTS = ['video.uploaded', 'video.ready', 'video.failed', 'video.deleted'];

/** `secret` only in the answer to creating one. */
type Endpoint = Schemas['WebhookEndpoint'] & Partial<Pick<Schemas['WebhookEndpointWithSecret'], 'secret'>>;

type Delivery = Schemas['WebhookDelivery'];

/** Endpoints are the owners' to manage (docs/dashboard.md, "Roles"): a member sees the list, no form. */
export function WebhooksPage({ role }: { role: Role }) {
  const { data, error, reload } = useLoad(() => api<Page<Endpoint>>('GET', '/webhooks'), []);
  const [created, setCreated] = useState<Endpoint | null>(null);
  const { failure, run } = useActions(reload);
  const create = (f: FormData) => {
    const events = f.getAll('events').map(String);
    const body: Record<string, unknown> = { url: String(f.get('url')), description: String(f.get('description')) };
    if (events.length && events.length < EVENTS.length) body.events = events;
    return run(async () => setCreated(await api<Endpoint>('POST', '/webhooks', body)));
  };
  return (
    <>
      <h1>Webhooks</h1>
      <Collection<Endpoint>
        create={
          role === 'owner' && {
            label: 'Add a webhook endpoint',
            submit: 'Add endpoint',
            layout: 'stack',
            onCreate: create,
            fields: [
              ['Endpoint URL', <input name="url" type="url" required placeholder="https://example.com/hooks/vidhost" />],
              ['Description', <input name="description" maxLength={500} />],
              [
                '',
                <fieldset>
                  <legend>Events (none checked = all, including future ones)</legend>
                  {EVENTS.map((ev) => (
                    <label class="check" key={ev}>
                      <input type="checkbox" name="events" value={ev} /> {ev}
                    </label>
                  ))}
                </fieldset>,
              ],
            ],
          }
        }
        error={failure ?? error}
        rows={data?.data}
        idAttribute="data-webhook-id"
        empty="No endpoints yet."
        columns={[
          { title: 'Endpoint', cell: (w) => <Link to={`/webhooks/${w.id}`}>{w.url}</Link> },
          { title: 'Events', cell: (w) => (w.events ? w.events.join(', ') : 'all events') },
          { title: 'State', cell: (w) => (w.enabled ? 'enabled' : `disabled${w.disabled_reason ? ` (${w.disabled_reason})` : ''}`) },
        ]}
      >
        {role === 'member' && <p>Endpoints are managed by the workspace's owners; as a member you can read them and their delivery logs.</p>}
        {created?.secret && <Secret title={`Signing secret for ${created.url}.`} value={created.secret} />}
      </Collection>
    </>
  );
}

/** Enabling, deleting and retrying are the owners' (a member reads the log). */
export function WebhookPage({ id, role }: { id: string; role: Role }) {
  const endpoint = useLoad(() => api<Endpoint>('GET', `/webhooks/${id}`), [id]);
  const [cursor, setCursor] = useState<string | undefined>();
  const log = useLoad(() => api<Page<Delivery>>('GET', `/webhooks/${id}/deliveries${qs({ limit: 20, cursor })}`), [id, cursor]);
  const [failure, setFailure] = useState<unknown>(null);
  usePoll(!!log.data?.data.some((d) => d.status === 'pending'), log.reload);
  const w = endpoint.data;

  const run = async (fn: () => Promise<unknown>) => {
    setFailure(null);
    try {
      await fn();
      await Promise.all([endpoint.reload(), log.reload()]);
    } catch (err) {
      setFailure(err);
    }
  };

  if (!w) return <ErrorNote error={endpoint.error} />;
  return (
    <>
      <h1>Webhook endpoint</h1>
      <p>
        <code>{w.url}</code> · {w.events ? w.events.join(', ') : 'all events'} · {w.enabled ? 'enabled' : 'disabled'}
      </p>
      {role === 'owner' && (
        <div class="row">
          <button type="button" class="secondary" onClick={() => run(() => api('PATCH', `/webhooks/${id}`, { enabled: !w.enabled }))}>
            {w.enabled ? 'Disable' : 'Enable'}
          </button>
          <button
            type="button"
            class="danger"
            onClick={() => confirm('Delete this endpoint?') && run(async () => { await api('DELETE', `/webhooks/${id}`); history.back(); })}
          >
            Delete endpoint
          </button>
        </div>
      )}
      <ErrorNote error={failure ?? log.error} />
      <h2>Delivery log</h2>
      {log.data?.data.length === 0 && <p>No deliveries yet.</p>}
      <table class="deliveries">
        <TableHead cols={['Event', 'Status', 'Attempts', 'Last answer', 'Created', '']} />
        <tbody>
          {log.data?.data.map((d) => (
            <tr key={d.id} data-delivery-id={d.id} data-status={d.status}>
              <td>{d.event_type}</td>
              <td>{d.status}</td>
              <td>{d.attempts}</td>
              <td>{d.last_status_code ?? d.last_error ?? '—'}</td>
              <td>{when(d.created_at)}</td>
              <td>
                {role === 'owner' && d.status !== 'pending' && (
                  <button type="button" class="secondary" onClick={() => run(() => api('POST', `/webhooks/${id}/deliveries/${d.id}/retry`))}>
                    Retry
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="row">
        {cursor && (
          <button type="button" class="secondary" onClick={() => setCursor(undefined)}>
            Newest
          </button>
        )}
        {log.data?.next_cursor && (
          <button type="button" class="secondary" onClick={() => setCursor(log.data!.next_cursor!)}>
            Older
          </button>
        )}
      </div>
    </>
  );
}
