import { useState } from 'preact/hooks';
import { api, type Page, type Schemas } from '../api';
import { LiveStudio } from '../components/LiveStudio';
import { CopyButton, ErrorNote, Link, Secret } from '../components/ui';
import { when } from '../format';
import { useLoad, usePoll } from '../hooks';

type LiveStream = Schemas['LiveStream'];

/** SPEC §17 in the dashboard: create a stream (key shown once), what to paste into OBS, status, preview, recordings. */
export function LivePage() {
  const { data, error, reload } = useLoad(() => api<Page<LiveStream>>('GET', '/live-streams?limit=100'), []);
  const [created, setCreated] = useState<LiveStream | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  usePoll(true, reload, 3000);

  const act = async (fn: () => Promise<unknown>) => {
    setFailure(null);
    try {
      await fn();
      await reload();
    } catch (err) {
      setFailure(err);
    }
  };
  const create = (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    return act(async () => {
      setCreated(await api<LiveStream>('POST', '/live-streams', { title: String(f.get('title') ?? ''), latency_mode: f.get('latency_mode'), reconnect_window: Number(f.get('reconnect_window')) }));
      form.reset();
    });
  };

  return (
    <>
      <h1>Live</h1>
      <p>Each live stream is an ingest point for OBS or any RTMP or SRT encoder. Every broadcast is played live and recorded as a video.</p>
      <form class="row" onSubmit={create} aria-label="Create a live stream">
        <label>
          Title
          <input name="title" maxLength={200} placeholder="e.g. Weekly town hall" />
        </label>
        <label>
          Latency
          <select name="latency_mode" defaultValue="standard">
            <option value="standard">Standard (≤ 10 s)</option>
            <option value="low">Low (≤ 4 s)</option>
          </select>
        </label>
        <label>
          Reconnect window (s)
          <input name="reconnect_window" type="number" min={0} max={1800} defaultValue="60" />
        </label>
        <button type="submit">Create live stream</button>
      </form>
      {created?.stream_key && (
        <>
          <Secret title={`Stream key of "${created.title || created.id}".`} value={created.stream_key} />
          <p>
            In OBS: Settings → Stream → Service <em>Custom</em>; Server <code>{created.ingest.rtmp_url}</code> <CopyButton text={created.ingest.rtmp_url} />; Stream Key: the key above.
            Keyframe interval {created.latency_mode === 'low' ? '1' : '2'} s, ≤ 1080p60, ≤ 20 Mb/s. SRT: <code>{created.ingest.srt_url}</code>
          </p>
        </>
      )}
      <ErrorNote error={failure ?? error} />
      <table>
        <thead>
          <tr>
            <th scope="col">Title</th>
            <th scope="col">Status</th>
            <th scope="col">Latency</th>
            <th scope="col">Recordings</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {data?.data.map((ls) => (
            <tr key={ls.id} data-live-id={ls.id}>
              <td>
                {ls.title || ls.id}
                <br />
                <small>
                  RTMP <code>{ls.ingest.rtmp_url}</code>
                </small>
              </td>
              <td data-status={ls.status}>
                {ls.disabled ? 'disabled' : ls.status}
                {ls.status === 'active' && (
                  <>
                    {' '}
                    <a href={ls.embed_url} target="_blank" rel="noopener">
                      preview
                    </a>
                  </>
                )}
                {ls.last_disconnect_reason && ls.status !== 'active' && <small> ({ls.last_disconnect_reason})</small>}
              </td>
              <td>{ls.latency_mode}</td>
              <td>
                {ls.recent_video_ids.slice(0, 3).map((v) => (
                  <div key={v}>
                    <Link to={`/videos/${v}`}>{v.slice(0, 12)}…</Link>
                  </div>
                ))}
              </td>
              <td>{when(ls.created_at)}</td>
              <td>
                {ls.status !== 'idle' && (
                  <button type="button" class="secondary" onClick={() => act(() => api('POST', `/live-streams/${ls.id}/complete`))}>
                    End broadcast
                  </button>
                )}
                <button type="button" class="secondary" onClick={() => act(async () => setCreated(await api<LiveStream>('POST', `/live-streams/${ls.id}/reset-stream-key`)))}>
                  New key
                </button>
                <button type="button" class="secondary" onClick={() => act(() => api('POST', `/live-streams/${ls.id}/${ls.disabled ? 'enable' : 'disable'}`))}>
                  {ls.disabled ? 'Enable' : 'Disable'}
                </button>
                <button
                  type="button"
                  class="danger"
                  onClick={() => confirm(`Delete the live stream "${ls.title || ls.id}"? Its recordings stay.`) && act(() => api('DELETE', `/live-streams/${ls.id}`))}
                >
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <LiveStudio streams={data?.data ?? []} known={created?.stream_key ? { id: created.id, key: created.stream_key } : null} />
    </>
  );
}
