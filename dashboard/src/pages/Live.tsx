import { useState } from 'preact/hooks';
import { api, type Page, type Schemas } from '../api';
import { Collection, useActions } from '../components/collection';
import { LiveStudio } from '../components/LiveStudio';
import { CopyButton, Link, Secret } from '../components/ui';
import { when } from '../format';
import { useLoad, usePoll } from '../hooks';

type LiveStream = Schemas['LiveStream'];

/**
 * SPEC §17 in the dashboard: create a stream (key shown once), what to paste into OBS, status,
 * preview, recordings. Members manage streams too (their simulcast targets are the owners', and
 * this page does not set any). The form and the table are the shared Collection; a panel about
 * one stream (a preview, its health) belongs beside it, as its own component.
 */
export function LivePage() {
  const { data, error, reload } = useLoad(() => api<Page<LiveStream>>('GET', '/live-streams?limit=100'), []);
  const [created, setCreated] = useState<LiveStream | null>(null);
  const { failure, run } = useActions(reload);
  usePoll(true, reload, 3000);

  const create = (f: FormData) =>
    run(async () =>
      setCreated(await api<LiveStream>('POST', '/live-streams', { title: String(f.get('title') ?? ''), latency_mode: f.get('latency_mode'), reconnect_window: Number(f.get('reconnect_window')) })),
    );

  return (
    <>
      <h1>Live</h1>
      <p>Each live stream is an ingest point for OBS or any RTMP or SRT encoder. Every broadcast is played live and recorded as a video.</p>
      <Collection<LiveStream>
        create={{
          label: 'Create a live stream',
          submit: 'Create live stream',
          onCreate: create,
          fields: [
            ['Title', <input name="title" maxLength={200} placeholder="e.g. Weekly town hall" />],
            [
              'Latency',
              <select name="latency_mode" defaultValue="standard">
                <option value="standard">Standard (≤ 10 s)</option>
                <option value="low">Low (≤ 4 s)</option>
              </select>,
            ],
            ['Reconnect window (s)', <input name="reconnect_window" type="number" min={0} max={1800} defaultValue="60" />],
          ],
        }}
        error={failure ?? error}
        rows={data?.data}
        idAttribute="data-live-id"
        columns={COLUMNS}
        actions={(ls) => <StreamActions stream={ls} run={run} onNewKey={setCreated} />}
      >
        {created?.stream_key && <StreamKey stream={created} />}
      </Collection>
      <LiveStudio streams={data?.data ?? []} known={created?.stream_key ? { id: created.id, key: created.stream_key } : null} />
    </>
  );
}

/** The key of a stream just created or reset, shown once, with what to paste into OBS. */
function StreamKey({ stream }: { stream: LiveStream }) {
  return (
    <>
      <Secret title={`Stream key of "${stream.title || stream.id}".`} value={stream.stream_key!} />
      <p>
        In OBS: Settings → Stream → Service <em>Custom</em>; Server <code>{stream.ingest.rtmp_url}</code> <CopyButton text={stream.ingest.rtmp_url} />; Stream Key: the key above.
        Keyframe interval {stream.latency_mode === 'low' ? '1' : '2'} s, ≤ 1080p60, ≤ 20 Mb/s. SRT: <code>{stream.ingest.srt_url}</code>
      </p>
    </>
  );
}

const COLUMNS = [
  {
    title: 'Title',
    cell: (ls: LiveStream) => (
      <>
        {ls.title || ls.id}
        <br />
        <small>
          RTMP <code>{ls.ingest.rtmp_url}</code>
        </small>
      </>
    ),
  },
  {
    title: 'Status',
    cell: (ls: LiveStream) => (
      <span data-status={ls.status}>
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
      </span>
    ),
  },
  { title: 'Latency', cell: (ls: LiveStream) => ls.latency_mode },
  {
    title: 'Recordings',
    cell: (ls: LiveStream) =>
      ls.recent_video_ids.slice(0, 3).map((v) => (
        <div key={v}>
          <Link to={`/videos/${v}`}>{v.slice(0, 12)}…</Link>
        </div>
      )),
  },
  { title: 'Created', cell: (ls: LiveStream) => when(ls.created_at) },
];

function StreamActions({ stream: ls, run, onNewKey }: { stream: LiveStream; run: (fn: () => Promise<unknown>) => Promise<boolean>; onNewKey: (s: LiveStream) => void }) {
  return (
    <>
      {ls.status !== 'idle' && (
        <button type="button" class="secondary" onClick={() => run(() => api('POST', `/live-streams/${ls.id}/complete`))}>
          End broadcast
        </button>
      )}
      <button type="button" class="secondary" onClick={() => run(async () => onNewKey(await api<LiveStream>('POST', `/live-streams/${ls.id}/reset-stream-key`)))}>
        New key
      </button>
      <button type="button" class="secondary" onClick={() => run(() => api('POST', `/live-streams/${ls.id}/${ls.disabled ? 'enable' : 'disable'}`))}>
        {ls.disabled ? 'Enable' : 'Disable'}
      </button>
      <button
        type="button"
        class="danger"
        onClick={() => confirm(`Delete the live stream "${ls.title || ls.id}"? Its recordings stay.`) && run(() => api('DELETE', `/live-streams/${ls.id}`))}
      >
        Delete
      </button>
    </>
  );
}
